"""Start-up and infrastructure failures as an operator meets them: one line naming the setting and
the cause, exit 2, no traceback, no secret in any output; stop means stop; migrations that run at
the same time on PostgreSQL."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, BotProcess, InProcessBot, free_port
from tests.fakebot import TOKEN, FakeTelegram

SECRET = "hook-s3cret-value"
API_KEY = "sk-test-api-key-value-123"
STT_KEY = "sk-test-stt-key-value-456"


def run_bot(
    tmp_path: Path, env: dict[str, str], *args: str, prefix: list[str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "WEBHOOK_URL", "WEBHOOK_SECRET"}}
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "bot", *(args or ("run",))],
        cwd=tmp_path, env={**base, "BOT_TOKEN": TOKEN, "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.db'}",
                           "PYTHONPATH": str(ROOT), **env},
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def assert_one_clean_line(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    """Exit 2; the last line says what is wrong; no traceback and no error logged before it (at
    DEBUG, the log lines that came before are allowed)."""
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("interview-bot: "), output
    assert "Traceback" not in output
    assert not [line for line in lines if " ERROR " in line or " CRITICAL " in line], output
    for part in expected:
        assert part in lines[-1], lines[-1]
    assert_no_secrets(output)


def assert_no_secrets(output: str) -> None:
    assert TOKEN.split(":")[1] not in output, "the bot token leaked"
    assert SECRET not in output, "the webhook secret leaked"
    assert API_KEY not in output, "the API key leaked"
    assert STT_KEY not in output, "the STT API key leaked"


def test_a_token_the_bot_api_rejects_is_one_line(own_fake: FakeTelegram, tmp_path: Path) -> None:
    wrong = "123456:" + "A" * 35
    result = run_bot(tmp_path, {"BOT_TOKEN": wrong, "TELEGRAM_API_URL": own_fake.url, "LOG_LEVEL": "DEBUG"})
    assert_one_clean_line(result, "BOT_TOKEN", "401")
    assert "A" * 35 not in result.stdout + result.stderr


def test_a_first_start_with_a_bad_token_prints_at_most_three_lines(own_fake: FakeTelegram, tmp_path: Path) -> None:
    """A new database (every migration runs) and a rejected token, at the default log level: the
    schema is one summary line, then the error (Alembic logged a line per step: 12 lines in all)."""
    result = run_bot(tmp_path, {"BOT_TOKEN": "123456:" + "B" * 35, "TELEGRAM_API_URL": own_fake.url})
    assert_one_clean_line(result, "BOT_TOKEN", "401")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) <= 3, lines
    assert any("database schema created" in line for line in lines), lines


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_an_api_url_that_answers_404_is_one_line(own_fake: FakeTelegram, tmp_path: Path) -> None:
    result = run_bot(tmp_path, {"TELEGRAM_API_URL": own_fake.url + "/nothing-here"})
    assert_one_clean_line(result, "TELEGRAM_API_URL", "404")


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("sqlite:////proc/nope/x.db", "unable to open database file"),
        ("postgresql://bot:pw-not-shown@127.0.0.1:{port}/bot", "onnect"),
    ],
    ids=["sqlite-path", "postgres-unreachable"],
)
@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_a_database_that_cannot_be_used_is_one_line(
    own_fake: FakeTelegram, tmp_path: Path, url: str, cause: str
) -> None:
    url = url.format(port=free_port())
    result = run_bot(tmp_path, {"DATABASE_URL": url, "TELEGRAM_API_URL": own_fake.url})
    assert_one_clean_line(result, "DATABASE_URL", cause)
    assert "pw-not-shown" not in result.stderr
    assert own_fake.calls_of("getMe") == []  # the database is checked before Telegram is called
    migrate = run_bot(tmp_path, {"DATABASE_URL": url}, "migrate")
    assert_one_clean_line(migrate, "DATABASE_URL", cause)


@pytest.mark.slow  # a real bot process; run by .ci/run's second step
def test_a_read_only_database_file_is_one_line(own_fake: FakeTelegram, tmp_path: Path) -> None:
    assert run_bot(tmp_path, {}, "migrate").returncode == 0
    db = tmp_path / "bot.db"
    db.chmod(stat.S_IRUSR)
    prefix: list[str] = []
    if os.geteuid() == 0:  # root writes read-only files: run the bot without that capability
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv")
        prefix = ["setpriv", "--bounding-set=-dac_override", "--inh-caps=-dac_override"]
    try:
        result = run_bot(tmp_path, {"TELEGRAM_API_URL": own_fake.url}, prefix=prefix)
    finally:
        db.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert_one_clean_line(result, "DATABASE_URL", "readonly")


@pytest.mark.slow  # a real bot process; run by .ci/run's second step
def test_webhook_mode_without_a_secret_refuses_to_start(own_fake: FakeTelegram, tmp_path: Path) -> None:
    env = {"TELEGRAM_API_URL": own_fake.url, "WEBHOOK_URL": "https://example.org/hook"}
    result = run_bot(tmp_path, env, "run", "--webhook")
    assert_one_clean_line(result, "WEBHOOK_SECRET", "required")
    assert own_fake.calls_of("setWebhook") == []


@pytest.mark.slow  # a real bot process; run by .ci/run's second step
def test_sigterm_while_the_bot_api_is_unreachable_stops_within_5_s(tmp_path: Path) -> None:
    fake: Any = type("NoServer", (), {"url": f"http://127.0.0.1:{free_port()}", "calls_of": lambda *_: []})()
    process = BotProcess(fake, tmp_path, env={"PYTHONPATH": str(ROOT), "LLM_API_KEY": API_KEY})
    process.start(wait=False)
    deadline = time.monotonic() + 30
    while "cannot reach the Bot API" not in process.log() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "cannot reach the Bot API" in process.log()
    assert process.proc is not None
    stopped_at = time.monotonic()
    process.proc.send_signal(signal.SIGTERM)
    process.proc.wait(10)
    assert time.monotonic() - stopped_at < 5
    log = process.log()
    assert "Traceback" not in log
    assert_no_secrets(log)


@pytest.mark.slow  # a real bot process; run by .ci/run's second step
def test_webhook_secret_and_keys_never_reach_the_debug_log(own_fake: FakeTelegram, tmp_path: Path) -> None:
    port = free_port()
    env = {
        "WEBHOOK_URL": f"http://127.0.0.1:{port}/hook",
        "WEBHOOK_SECRET": SECRET,
        "WEBHOOK_PORT": str(port),
        "LLM_API_KEY": API_KEY,
        "STT": "openai",
        "STT_BASE_URL": "http://127.0.0.1:9/v1",
        "STT_API_KEY": STT_KEY,
        "LOG_LEVEL": "DEBUG",
    }
    for log_format in ("text", "json"):
        process = BotProcess(own_fake, tmp_path / log_format, env={**env, "LOG_FORMAT": log_format})
        (tmp_path / log_format).mkdir()
        process.start(wait=False)
        own_fake.wait_for(lambda: bool(own_fake.calls_of("setWebhook")), 60, "setWebhook")
        assert process.stop() == 0
        log = process.log()
        assert "setWebhook" in log  # the DEBUG log does show the call...
        assert_no_secrets(log)  # ...but not the secret in its parameters
        own_fake.calls.clear()


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
@pytest.mark.postgres
def test_two_migrations_at_once_on_a_fresh_postgres(postgres: Any, tmp_path: Path) -> None:
    url = postgres.create_db("two_migrations")
    env = {**os.environ, "DATABASE_URL": url, "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.Popen([sys.executable, "-m", "bot", "migrate"], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]  # fmt: skip
    results = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], results


@pytest.mark.slow
def test_telegram_lost_mid_run_is_one_warning_per_retry(tmp_path: Path) -> None:
    fake = FakeTelegram().start()
    process = BotProcess(fake, tmp_path).start()
    try:
        fake.stop()  # the network goes away while the bot polls
        time.sleep(6)
        log = process.log()
        assert "getUpdates failed" in log
        assert "Traceback" not in log
        assert process.proc is not None and process.proc.poll() is None  # still running, retrying
    finally:
        stopped_at = time.monotonic()
        assert process.stop() == 0
    assert time.monotonic() - stopped_at < 5
    retries = [line for line in process.log().splitlines() if "getUpdates failed" in line]
    assert all(" WARNING " in line for line in retries)
    assert_no_secrets(process.log())


@pytest.mark.slow  # a real bot process; run by .ci/run's second step
def test_the_bot_process_sets_its_start_up_objects_aside_from_garbage_collection(
    own_fake: FakeTelegram, tmp_path: Path
) -> None:
    """Once the grader is ready, the bank's and the grader's objects are frozen (gc.freeze): a full
    collection no longer walks them with every chat waiting."""
    process = BotProcess(own_fake, tmp_path)
    process.start()
    try:
        own_fake.wait_for(lambda: "set aside from garbage collection" in process.log(), 60, "the freeze")
        user = own_fake.user(4242)
        user.send("/q 463")
        (question,) = user.expect()
        assert "activation recomputation" in question.text
    finally:
        assert process.stop() == 0
    log = process.log()
    assert log.index("grader ready") < log.index("set aside from garbage collection")
    frozen = re.search(r"set aside from garbage collection: (\d+)", log)
    assert frozen is not None and int(frozen.group(1)) > 100_000


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_health_in_polling_mode_reads_the_heartbeat(own_fake: FakeTelegram, tmp_path: Path) -> None:
    heartbeat = tmp_path / "alive"
    env = {"HEARTBEAT_FILE": str(heartbeat), "TELEGRAM_API_URL": own_fake.url}
    down = run_bot(tmp_path, env, "health")
    assert down.returncode == 1 and "no heartbeat" in down.stdout  # no bot ran here
    bot = InProcessBot(own_fake, tmp_path, env={"HEARTBEAT_FILE": str(heartbeat)}).start()
    try:
        own_fake.wait_for(heartbeat.exists, 10, "the heartbeat")
        up = run_bot(tmp_path, env, "health")
        assert up.returncode == 0 and '"ok": true' in up.stdout
    finally:
        bot.stop()
    os.utime(heartbeat, (time.time() - 600, time.time() - 600))  # a hung loop stops touching it
    stale = run_bot(tmp_path, env, "health")
    assert stale.returncode == 1 and '"ok": false' in stale.stdout
