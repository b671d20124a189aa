"""Settings: defaults, parsing, and one clear line with exit code 2 for bad values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import Settings, SettingsError, load_settings

ENV_KEYS = ("BOT_TOKEN", "DATABASE_URL", "TELEGRAM_API_URL", "BANK_PATH", "ADMIN_IDS",
            "DEFAULT_TIMEZONE", "DEFAULT_LANGUAGE", "LOG_LEVEL", "LOG_FORMAT", "STT", "STT_BASE_URL",
            "STT_API_KEY", "STT_MODEL", "STT_MAX_SECONDS", "STT_DAILY_LIMIT", "STT_TIMEOUT", "WHISPER_MODEL",
            "WEBAPP_URL", "WEBAPP_SHORT_NAME", "WEBAPP_AUTH_MAX_AGE", "WEBAPP_DEV")  # fmt: skip


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in ENV_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults() -> None:
    s = load_settings()
    assert s.telegram_api_url == "https://api.telegram.org"
    assert s.database_url.startswith("sqlite+aiosqlite:///") and s.database_url.endswith("interview-bot.db")
    assert (s.default_timezone, s.default_language, s.admin_ids) == ("Europe/Moscow", "ru", frozenset())
    assert (s.webapp_url, s.webapp_short_name, s.webapp_auth_max_age, s.webapp_dev) == (None, None, 86_400, False)


def test_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADMIN_IDS", "1, 2;3")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@db/bot")
    monkeypatch.setenv("TELEGRAM_API_URL", "http://127.0.0.1:8081/")
    s = load_settings()
    assert s.admin_ids == {1, 2, 3}
    assert s.database_url == "postgresql+asyncpg://u:p@db/bot"
    assert s.telegram_api_url == "http://127.0.0.1:8081"


def test_dotenv_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DEFAULT_LANGUAGE=en\nLOG_FORMAT=json\n")
    s = load_settings()
    assert (s.default_language, s.log_format) == ("en", "json")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("DEFAULT_TIMEZONE", "Mars/Olympus", "DEFAULT_TIMEZONE: unknown IANA time zone 'Mars/Olympus'"),
        ("ADMIN_IDS", "alice", "ADMIN_IDS: expected Telegram user ids"),
        ("DATABASE_URL", "mysql://x", "DATABASE_URL: expected sqlite:///"),
        ("LOG_FORMAT", "xml", "LOG_FORMAT: "),
        ("TELEGRAM_API_URL", "api.telegram.org", "TELEGRAM_API_URL: must start with http"),
        ("STT", "whisper", "STT: Input should be 'off', 'openai' or 'local'"),
        ("STT_BASE_URL", "api.openai.com/v1", "STT_BASE_URL: must start with http:// or https://"),
        ("STT_MAX_SECONDS", "0", "STT_MAX_SECONDS: Input should be greater than or equal to 1"),
        ("STT_DAILY_LIMIT", "many", "STT_DAILY_LIMIT: Input should be a valid integer"),
        ("STT_TIMEOUT", "-1", "STT_TIMEOUT: Input should be greater than 0"),
        ("WEBAPP_URL", "http://bot.example.org/app/", "WEBAPP_URL: must start with https://"),
        ("WEBAPP_SHORT_NAME", "my app!", "WEBAPP_SHORT_NAME: expected the Mini App's short name"),
        ("WEBAPP_AUTH_MAX_AGE", "0", "WEBAPP_AUTH_MAX_AGE: "),
        ("WEBAPP_AUTH_MAX_AGE", "a day", "WEBAPP_AUTH_MAX_AGE: "),
        ("WEBAPP_DEV", "maybe", "WEBAPP_DEV: "),
        ("FLOOD_BURST", "-1", "FLOOD_BURST: Input should be greater than or equal to 0"),
    ],
)
def test_bad_values_name_the_variable(monkeypatch: pytest.MonkeyPatch, key: str, value: str, expected: str) -> None:
    monkeypatch.setenv(key, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(info.value).startswith(expected)


def test_dev_mode_refuses_a_public_mini_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEBAPP_DEV", "1")
    monkeypatch.setenv("WEBAPP_URL", "https://bot.example.org/app/")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert str(info.value).startswith("WEBAPP_DEV: ") and "\n" not in str(info.value)


def test_an_empty_variable_means_not_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BANK_PATH=`` (or compose's ``${BANK_PATH}`` of an unset variable) is the bundled bank, not
    the current folder; the same for every setting."""
    for key in ("BANK_PATH", "DATABASE_URL", "WEBAPP_URL", "STT", "LOG_LEVEL", "BOT_TOKEN"):
        monkeypatch.setenv(key, "")
    settings = load_settings()
    defaults = Settings()
    assert settings.bank_path is None and settings.database_url == defaults.database_url
    assert settings.webapp_url is None and settings.stt == "off" and settings.log_level == defaults.log_level
    with pytest.raises(SettingsError, match=r"^BOT_TOKEN: not set"):
        settings.require_token()


def test_token_required_and_checked() -> None:
    with pytest.raises(SettingsError, match=r"^BOT_TOKEN: not set"):
        load_settings().require_token()
    with pytest.raises(SettingsError, match=r"^BOT_TOKEN: malformed"):
        load_settings(bot_token="hello").require_token()


def test_voice_settings() -> None:
    s = load_settings()
    assert (s.stt, s.stt_max_seconds, s.stt_daily_limit, s.whisper_device, s.whisper_compute_type) == (
        "off",
        180,
        30,
        "cpu",
        "int8",
    )
    with pytest.raises(SettingsError, match=r"^STT_BASE_URL: required with STT=openai"):
        load_settings(stt="openai").require_stt()
    with pytest.raises(SettingsError, match=r"^WHISPER_MODEL: required with STT=local"):
        load_settings(stt="local").require_stt()
    s = load_settings(stt="openai", stt_base_url="http://127.0.0.1:8000/v1/", stt_api_key="sk-x")
    s.require_stt()
    assert s.stt_base_url == "http://127.0.0.1:8000/v1" and "sk-x" not in repr(s)


def test_stt_local_without_faster_whisper_is_one_line(tmp_path: Path) -> None:
    import importlib.util

    if importlib.util.find_spec("faster_whisper") is not None:
        pytest.skip("faster-whisper is installed here")
    result = _run_cli({"BOT_TOKEN": "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ", "STT": "local", "WHISPER_MODEL": "small"},
                      tmp_path)  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "interview-bot: STT: local needs faster-whisper: pip install 'interview-bot[voice]'"
    ]


def _run_cli(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k not in ENV_KEYS}
    full["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # this checkout's bot, not the installed one
    return subprocess.run([sys.executable, "-m", "bot", "run"], env={**full, **env}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_cli_exits_2_with_one_line(tmp_path: Path) -> None:
    result = _run_cli({}, tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "interview-bot: BOT_TOKEN: not set. Get a token from @BotFather and run: BOT_TOKEN=... interview-bot run"
    ]
    secret = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    result = _run_cli({"BOT_TOKEN": secret, "DEFAULT_TIMEZONE": "Nowhere"}, tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "DEFAULT_TIMEZONE" in result.stderr and secret not in result.stderr


def test_bot_refuses_to_start_on_invalid_bank(tmp_path: Path) -> None:
    (tmp_path / "bank").mkdir()
    (tmp_path / "bank" / "x.yaml").write_text("questions:\n  - id: q1\n")
    result = _run_cli({"BOT_TOKEN": "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ", "BANK_PATH": str(tmp_path / "bank"),
                       "DATABASE_URL": f"sqlite:///{tmp_path}/x.db"}, tmp_path)  # fmt: skip
    assert result.returncode == 1
    assert "x.yaml:2: question 'q1': missing 'topic'" in result.stderr
    assert "refusing to start" in result.stderr
