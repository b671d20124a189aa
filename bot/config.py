"""Settings from environment variables and an optional `.env` file (pydantic-settings).

Nothing here runs at import time: call :func:`load_settings`. Errors become one line naming the
variable (:class:`SettingsError`), which the CLI prints before exiting with code 2.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

APP_NAME = "interview-bot"


class SettingsError(Exception):
    """A missing or malformed setting; the message names the environment variable."""


def default_database_url() -> str:
    """A SQLite file in the per-user data directory, or ./interview-bot.db if that is not writable."""
    import platformdirs

    try:
        directory = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
        directory.mkdir(parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK):
            raise PermissionError(directory)
        path = directory / "interview-bot.db"
    except OSError:
        path = Path("interview-bot.db").absolute()
    return f"sqlite:///{path}"


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


class Settings(BaseSettings):
    # an empty variable (KEY= in .env, or ${KEY} of an unset variable in compose) means "not set"
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", frozen=True, env_ignore_empty=True
    )

    bot_token: SecretStr | None = None
    database_url: str = Field(default_factory=default_database_url)
    telegram_api_url: str = "https://api.telegram.org"
    bank_path: Path | None = None
    bank_cache: bool = True  # rebuild an unchanged bank from its cached validated records
    admin_ids: Annotated[frozenset[int], NoDecode] = frozenset()
    default_timezone: str = "Europe/Moscow"
    default_language: Literal["ru", "en"] = "ru"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    log_format: Literal["text", "json"] = "text"

    # Daily pushes
    tick_seconds: float = Field(default=30.0, gt=0, le=30)
    push_grace_hours: float = Field(default=3.0, ge=0, le=23)
    push_lease_seconds: float = Field(default=120.0, gt=0)
    send_rate: float = Field(default=30.0, gt=0, le=1000)
    # commands and button presses of one user in a chat taken within 2 seconds (0: no limit)
    flood_burst: int = Field(default=20, ge=0, le=10_000)
    paid_broadcast: bool = False

    poll_timeout: float = Field(default=10.0, ge=0, le=50)  # long-polling wait per getUpdates
    # touched by the polling loop on every round; `interview-bot health` checks its age
    heartbeat_file: Path = Field(default_factory=lambda: Path(tempfile.gettempdir()) / "interview-bot.alive")

    # Webhook mode and monitoring
    webhook_url: str | None = None
    webhook_secret: SecretStr | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = Field(default=8443, ge=1, le=65535)
    metrics_port: int | None = Field(default=None, ge=1, le=65535)

    # Grading: the offline rubric grader, or an LLM examiner on an OpenAI-compatible endpoint
    grader: Literal["keywords", "llm"] = "keywords"
    llm_base_url: str | None = None  # e.g. http://localhost:11434/v1 (Ollama), https://api.openai.com/v1
    llm_api_key: SecretStr | None = None
    llm_model: str | None = None
    llm_timeout: float = Field(default=20.0, gt=0, le=300)
    llm_daily_limit: int = Field(default=50, ge=0, le=100_000)  # LLM gradings per user per day

    # Voice answers: off, an OpenAI-compatible /audio/transcriptions endpoint, or faster-whisper here
    stt: Literal["off", "openai", "local"] = "off"
    stt_base_url: str | None = None  # e.g. https://api.openai.com/v1, http://localhost:8000/v1
    stt_api_key: SecretStr | None = None
    stt_model: str = "whisper-1"
    stt_timeout: float = Field(default=120.0, gt=0, le=1800)  # seconds per transcription
    stt_max_seconds: int = Field(default=180, ge=1, le=3600)  # longest voice answer transcribed
    stt_daily_limit: int = Field(default=30, ge=0, le=100_000)  # transcriptions per user per day
    whisper_model: str | None = None  # STT=local: a faster-whisper model name (e.g. small) or a folder
    whisper_device: str = "cpu"
    whisper_compute_type: str = "int8"

    @field_validator("stt_base_url")
    @classmethod
    def _check_stt_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https:// (e.g. https://api.openai.com/v1)")
        return value.rstrip("/")

    # The Mini App (served at /app/ by the HTTP server of the webhook or METRICS_PORT)
    webapp_url: str | None = None  # its public https address, e.g. https://bot.example.org/app/
    webapp_short_name: str | None = None  # the short name given to @BotFather /newapp (group links)
    webapp_auth_max_age: int = Field(default=86_400, ge=60, le=30 * 86_400)  # seconds initData stays valid
    webapp_dev: bool = False  # local development only: /app/ signs requests itself as a test user

    @field_validator("webapp_url")
    @classmethod
    def _check_webapp_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith("https://"):
            raise ValueError("must start with https:// (Telegram opens Mini Apps over HTTPS only)")
        return value.strip()

    @field_validator("webapp_short_name")
    @classmethod
    def _check_short_name(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not re.fullmatch(r"[A-Za-z0-9_]{3,30}", value):
            raise ValueError("expected the Mini App's short name from @BotFather /newapp (3-30 of A-Z a-z 0-9 _)")
        return value

    @field_validator("llm_base_url")
    @classmethod
    def _check_llm_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https:// (e.g. http://localhost:11434/v1)")
        return value.rstrip("/")

    def require_llm(self) -> None:
        """With GRADER=llm, the endpoint and model must be set (one line naming what is missing)."""
        if self.grader != "llm":
            return
        if not self.llm_base_url:
            raise SettingsError("LLM_BASE_URL: required with GRADER=llm (e.g. http://localhost:11434/v1)")
        if not self.llm_model:
            raise SettingsError("LLM_MODEL: required with GRADER=llm (e.g. qwen2.5:7b-instruct)")

    def require_stt(self, *, installed: bool = True) -> None:
        """With STT=openai the endpoint must be set; with STT=local, the model (and, with
        ``installed``, faster-whisper)."""
        if self.stt == "openai" and not self.stt_base_url:
            raise SettingsError("STT_BASE_URL: required with STT=openai (e.g. https://api.openai.com/v1)")
        if self.stt == "local":
            if not self.whisper_model:
                raise SettingsError(
                    "WHISPER_MODEL: required with STT=local (a faster-whisper model name such as small, "
                    "or the folder of a converted model)"
                )
            import importlib.util

            if installed and importlib.util.find_spec("faster_whisper") is None:
                raise SettingsError("STT: local needs faster-whisper: pip install 'interview-bot[voice]'")

    @field_validator("admin_ids", mode="before")
    @classmethod
    def _parse_ids(cls, value: object) -> object:
        if isinstance(value, str):
            parts = [p for p in value.replace(";", ",").replace(" ", ",").split(",") if p]
            try:
                return frozenset(int(p) for p in parts)
            except ValueError:
                raise ValueError("expected Telegram user ids separated by commas") from None
        return value

    @field_validator("default_timezone")
    @classmethod
    def _check_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA time zone {value!r} (e.g. Europe/Moscow)") from None
        return value

    @field_validator("telegram_api_url")
    @classmethod
    def _check_api_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("database_url")
    @classmethod
    def _check_db_url(cls, value: str) -> str:
        return database_url(value)

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    def require_token(self) -> str:
        if self.bot_token is None or not self.bot_token.get_secret_value().strip():
            raise SettingsError(
                "BOT_TOKEN: not set. Set it to your bot's token from @BotFather (digits:secret of 20+ characters), "
                "or try the bot without one: interview-bot demo"
            )
        token = self.bot_token.get_secret_value().strip()
        head, _, tail = token.partition(":")
        if not head.isdigit() or len(tail) < 20:
            raise SettingsError(
                "BOT_TOKEN: malformed (expected <digits>:<secret of 20+ characters>, as @BotFather gives it)"
            )
        return token


def database_url(url: str) -> str:
    """A database URL with the driver the bot uses: SQLite's own (``sqlite://``; the older
    ``sqlite+aiosqlite://`` is read as it), asyncpg for PostgreSQL."""
    if url.startswith(("sqlite://", "sqlite+aiosqlite://")):
        return "sqlite://" + url.split("://", 1)[1]
    for prefix in (
        "postgresql://",
        "postgres://",
        "postgresql+psycopg://",
        "postgresql+psycopg2://",
    ):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url.removeprefix(prefix)
    if url.startswith("postgresql+asyncpg://"):
        return url
    raise ValueError("expected sqlite:///path/to/file.db or postgresql://user:pass@host/db")


def load_settings(**overrides: object) -> Settings:
    """Read settings; raise :class:`SettingsError` with one line naming the bad variable."""
    try:
        settings = Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]).upper() if first["loc"] else "settings"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{name}: {message}") from None
    if settings.webapp_dev and settings.webapp_url:
        raise SettingsError(
            "WEBAPP_DEV: dev mode signs logins itself; it cannot run with a public WEBAPP_URL (unset one of them)"
        )
    return settings
