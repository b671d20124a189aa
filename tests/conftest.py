"""Shared fixtures: the fake Bot API server, the bot running against it (in this process, or as a
real child process for the crash and restart tests), databases."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.fakebot import TOKEN, FakeTelegram


def dev_answer(folder: str, question: str, kind: str) -> str:
    """The one answer of ``kind`` to ``question`` in a dev answer set (tests/fixtures/<folder>/*.jsonl)."""
    import json

    files = sorted((Path(__file__).parent / "fixtures" / folder).glob("*.jsonl"))
    rows = [json.loads(line) for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    (text,) = [r["text"] for r in rows if r["question"] == question and r["kind"] == kind]
    return str(text)


@functools.cache
def shipped_bank() -> Any:
    from bot.bank import default_bank_path, load_bank

    return load_bank(default_bank_path())


@functools.cache
def shipped_catalog() -> Any:
    """The shipped bank's catalog (search and glossary indexes), built once per test process."""
    from bot.catalog import Catalog

    return Catalog.build(shipped_bank())


def shipped_counts() -> tuple[int, int, int]:
    """The shipped bank's items, questions and practice tasks (tests that show counts follow the bank)."""
    bank = shipped_bank()
    tasks = sum(1 for q in bank.questions.values() if q.kind == "task")
    return len(bank.questions), len(bank.questions) - tasks, tasks


ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"


class BotProcess:
    """``python -m bot run`` as a child process, pointed at the fake server."""

    def __init__(self, fake: FakeTelegram, workdir: Path, env: dict[str, str] | None = None) -> None:
        self.fake = fake
        self.workdir = workdir
        self.db_url = f"sqlite:///{workdir / 'bot.db'}"
        self.env = {
            **os.environ,
            "BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": fake.url,
            "DATABASE_URL": self.db_url,
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            "POLL_TIMEOUT": "1",  # a short long-poll so the process stops quickly
            **(env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / "bot.log"

    def start(self, wait: bool = True) -> BotProcess:
        calls_before = len(self.fake.calls_of("getUpdates"))
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run"], cwd=self.workdir, env=self.env,
            stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        if wait:
            self.fake.wait_for(
                lambda: len(self.fake.calls_of("getUpdates")) > calls_before or self.proc.poll() is not None,  # type: ignore[union-attr]
                timeout=60, what="the bot to start polling",
            )  # fmt: skip
            if self.proc.poll() is not None:
                raise AssertionError(f"bot exited at start:\n{self.log()}")
        return self

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        """Query the bot's SQLite database (what the bot stored)."""
        import sqlite3

        with sqlite3.connect(self.db_url.removeprefix("sqlite:///")) as conn:
            return conn.execute(sql, args).fetchall()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode


class InProcessBot(BotProcess):
    """The same bot, unmodified (settings, bank, ``build_application``, ``serve``), run on an event
    loop of its own in a thread of the test process: no interpreter start, no imports, no bank load
    per bot. Logs go to ``bot.log`` through the bot's own token filter. A clock can be injected."""

    _banks: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        fake: FakeTelegram,
        workdir: Path,
        env: dict[str, str] | None = None,
        *,
        clock: Any = None,
    ) -> None:
        super().__init__(fake, workdir, env)
        self.settings_env = {
            "BOT_TOKEN": TOKEN,
            "TELEGRAM_API_URL": fake.url,
            "DATABASE_URL": self.db_url,
            "LOG_LEVEL": "INFO",
            "POLL_TIMEOUT": "1",
            **(env or {}),
        }
        self.clock = clock
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._handler: logging.Handler | None = None

    def _settings(self) -> Any:
        from bot.config import Settings, load_settings

        fields = set(Settings.model_fields)
        overrides = {k.lower(): v for k, v in self.settings_env.items() if k.lower() in fields}
        return load_settings(_env_file=None, **overrides)

    def _bank(self, settings: Any) -> Any:
        from bot.bank import default_bank_path, load_bank

        path = settings.bank_path or default_bank_path()
        key = str(path)
        if key not in self._banks:  # the shipped bank is loaded once per test session
            self._banks[key] = load_bank(path)
        return self._banks[key]

    def start(self, wait: bool = True) -> BotProcess:
        from bot.logs import RedactTokenFilter

        settings = self._settings()
        bank = self._bank(settings)
        self._handler = logging.FileHandler(self.log_path, encoding="utf-8")
        self._handler.addFilter(RedactTokenFilter(TOKEN))
        self._handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self._handler.setLevel(settings.log_level)
        root = logging.getLogger()
        root.addHandler(self._handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
        for noisy in ("httpx", "httpcore", "apscheduler"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
        calls_before = len(self.fake.calls_of("getUpdates"))
        started = threading.Event()

        async def main() -> None:
            from bot.tg.app import build_application, serve

            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            started.set()
            app = build_application(settings, bank, TOKEN, clock=self.clock)
            await serve(app, settings, webhook=settings.webhook_url is not None, stop=self._stop)

        def run() -> None:
            try:
                asyncio.run(main())
            except BaseException as exc:  # reported by start() or stop()
                self._failure = exc
                logging.getLogger("tests").exception("the bot stopped with an error")
            finally:
                started.set()

        self._failure = None
        self._thread = threading.Thread(target=run, name="bot", daemon=True)
        self._thread.start()
        started.wait(30)
        if wait:
            self.fake.wait_for(
                lambda: len(self.fake.calls_of("getUpdates")) > calls_before or not self.running,
                timeout=60, what="the bot to start polling",
            )  # fmt: skip
            if not self.running:
                raise AssertionError(f"bot exited at start:\n{self.log()}")
        return self

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def kill(self) -> None:
        raise NotImplementedError("kill -9 needs a real process: use BotProcess")

    def stop(self) -> int | None:
        if self._thread is None:
            return None
        if self._loop is not None and self._stop is not None and self.running:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        assert not self._thread.is_alive(), "the in-process bot did not stop within 30 s"
        if self._handler is not None:
            logging.getLogger().removeHandler(self._handler)
            self._handler.close()
        return 1 if self._failure else 0


@pytest.fixture
def own_fake() -> Iterator[FakeTelegram]:
    """A fake server of the test's own, for tests that run their own bot."""
    server = FakeTelegram().start()
    yield server
    server.stop()


def away_from_midnight(margin: float = 30.0, zones: tuple[str, ...] = ("UTC", "Europe/Moscow")) -> None:
    """Wait until a day boundary is at least ``margin`` seconds away in each zone (UTC, and the
    bot's default zone), for a test that counts a day's answers, a streak or a date it writes."""
    from datetime import UTC, datetime, timedelta
    from zoneinfo import ZoneInfo

    for zone in zones:
        now = datetime.now(UTC).astimezone(ZoneInfo(zone))
        midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
        left = (midnight - now).total_seconds()
        if left < margin:
            time.sleep(left + 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def bot(fake: FakeTelegram, tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    process = InProcessBot(fake, tmp_path_factory.mktemp("bot")).start()
    yield process
    assert process.stop() == 0, f"the bot failed:\n{process.log()}"
    log = process.log()
    assert TOKEN not in log, "the bot token leaked into the log"
    assert TOKEN.split(":")[1] not in log


_ids = iter(range(10_000, 10_000_000, 7))


@pytest.fixture
def uid() -> int:
    """A fresh user id per test (so tests sharing one bot process don't see each other)."""
    return next(_ids)


def wait_until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


@pytest.fixture(scope="session")
def postgres() -> Iterator[object]:
    """A real PostgreSQL server for the session (skipped only where no binaries exist and
    REQUIRE_POSTGRES is unset; CI sets it)."""
    from tests.pg import PostgresServer

    try:
        server = PostgresServer().start()
    except FileNotFoundError as exc:
        if os.environ.get("REQUIRE_POSTGRES"):
            raise
        pytest.skip(str(exc))
    yield server
    server.stop()


_db_names = iter(range(1, 10_000))


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty database URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'test.db'}"
    server = request.getfixturevalue("postgres")
    return server.create_db(f"t{os.getpid()}_{next(_db_names)}")  # type: ignore[attr-defined,no-any-return]
