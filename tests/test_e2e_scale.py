"""Scale and operations end to end: webhook mode, health and metrics, two instances on one
PostgreSQL, graceful SIGTERM, one sender per SQLite database, admin commands."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
import urllib.error
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.i18n import counted
from tests.conftest import ROOT, BotProcess, InProcessBot, free_port, shipped_counts
from tests.daily_helpers import migrate, query, seed_due_chats
from tests.fakebot import TOKEN, FakeTelegram
from tests.pg import pg_rows

pytestmark = pytest.mark.e2e


def http(
    method: str, url: str, body: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def webhook_env(port: int, **extra: str) -> dict[str, str]:
    return {
        "WEBHOOK_URL": f"http://127.0.0.1:{port}/tg-hook",
        "WEBHOOK_SECRET": "s3cret-token",
        "WEBHOOK_PORT": str(port),
        **extra,
    }


def message_update(update_id: int, user_id: int, text: str) -> dict[str, Any]:
    user = {"id": user_id, "is_bot": False, "first_name": "Web", "language_code": "ru"}
    message = {
        "message_id": update_id,
        "date": int(time.time()),
        "chat": {"id": user_id, "type": "private"},
        "from": user,
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"update_id": update_id, "message": message}


@pytest.mark.slow
def test_webhook_checks_the_secret_and_drops_redeliveries(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    port = free_port()
    bot = BotProcess(fake, tmp_path, env=webhook_env(port))
    bot.start(wait=False)
    try:
        fake.wait_for(lambda: bool(fake.webhook_url), 60, "setWebhook")
        (params,) = fake.calls_of("setWebhook")
        assert params["secret_token"] == "s3cret-token"
        url = f"http://127.0.0.1:{port}/tg-hook"
        fake.private_chat(5151)
        status, _ = http("POST", url, message_update(1, 5151, "/help"))
        assert status == 403  # no secret
        status, _ = http("POST", url, message_update(2, 5151, "/help"), {"X-Telegram-Bot-Api-Secret-Token": "wrong"})
        assert status == 403
        time.sleep(0.5)
        assert fake.messages(5151) == []
        good = {"X-Telegram-Bot-Api-Secret-Token": "s3cret-token"}
        for _ in range(3):  # Telegram redelivers when it doesn't get a 200 in time
            status, _ = http("POST", url, message_update(3, 5151, "/help"), good)
            assert status == 200
        fake.wait_for(lambda: len(fake.messages(5151)) >= 1, 10, "the reply")
        time.sleep(1.0)
        assert len(fake.messages(5151)) == 1
        assert "Команды" in fake.messages(5151)[0].text
        for bad in ([], "abc", {"update_id": "abc"}, {"update_id": 2**63}, {"update_id": 9, "message": "str"}):
            status, _ = http("POST", url, bad, good)  # type: ignore[arg-type]
            assert status == 400, bad
        assert bot.rows("select update_id from inbox order by update_id") == [(3,)]
        status, body = http("GET", f"http://127.0.0.1:{port}/healthz")
        health = json.loads(body)
        assert (
            status == 200 and health["ok"] and health["database"] and health["bank"]["questions"] == shipped_counts()[0]
        )
        status, body = http("GET", f"http://127.0.0.1:{port}/metrics")
        text = body.decode()
        assert 'interview_bot_updates_total{kind="message"} 1.0' in text
        assert "interview_bot_duplicate_updates_total 2.0" in text
        assert "interview_bot_sender_queue_depth" in text
        # the Docker health check: `interview-bot health` reads the same endpoint
        import os
        import subprocess
        import sys

        env = {**os.environ, **webhook_env(port), "BOT_TOKEN": "x"}
        ok = subprocess.run(
            [sys.executable, "-m", "bot", "health"], env=env, capture_output=True, text=True, timeout=30
        )
        assert ok.returncode == 0 and '"ok": true' in ok.stdout
        env["WEBHOOK_PORT"] = str(free_port())  # nothing listens there
        down = subprocess.run(
            [sys.executable, "-m", "bot", "health"], env=env, capture_output=True, text=True, timeout=30
        )
        assert down.returncode == 1 and "unhealthy" in down.stdout
    finally:
        assert bot.stop() == 0


def _seed_postgres(url: str, chat_ids: list[int]) -> None:
    import asyncpg  # type: ignore[import-untyped]

    async def go() -> None:
        conn = await asyncpg.connect(url)
        due = datetime.now(UTC) - timedelta(minutes=1)
        rows = [
            (
                cid,
                "private",
                "UTC",
                True,
                due.hour * 60 + due.minute,
                False,
                "question",
                due,
                due.date(),
                datetime.now(UTC),
            )
            for cid in chat_ids
        ]
        await conn.executemany(
            "insert into chats (id, type, timezone, push_enabled, push_minute, push_weekdays_only, push_kind,"
            " next_push_at, next_push_date, created_at) values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
            rows,
        )
        await conn.close()

    asyncio.run(go())


@pytest.mark.postgres
@pytest.mark.slow
def test_two_instances_share_1000_pushes_on_postgres(own_fake: FakeTelegram, postgres: Any, tmp_path: Path) -> None:
    fake = own_fake
    url = postgres.create_db("two_instances")
    chats = list(range(2_000_001, 2_001_001))
    for cid in chats:
        fake.private_chat(cid)
    migrate(url, tmp_path)
    env = {"DATABASE_URL": url, "TICK_SECONDS": "0.5", "SEND_RATE": "150"}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = BotProcess(fake, tmp_path / "a", env={**env, **webhook_env(free_port())})
    b = BotProcess(fake, tmp_path / "b", env={**env, **webhook_env(free_port())})
    a.start(wait=False)
    b.start(wait=False)
    try:
        # the pushes come due once both are up: one instance alone sends all 1000 in ~7 s, so a
        # second one that started seconds later on a loaded machine would find little left
        fake.wait_for(lambda: len(fake.calls_of("setWebhook")) >= 2, 60, "both instances to start")
        _seed_postgres(url, chats)
        started = time.monotonic()
        fake.wait_for(lambda: len({m.chat_id for m in fake.messages()}) >= len(chats), 120, "1000 pushes")
        elapsed = time.monotonic() - started
        time.sleep(2)
    finally:
        a.stop()
        b.stop()
    counts = Counter(m.chat_id for m in fake.messages() if "Вопрос дня" in m.text)
    duplicates = sum(n - 1 for n in counts.values())
    per_instance = dict(pg_rows(url, "select claimed_by, count(*) from deliveries group by claimed_by"))
    print(
        f"\ntwo instances, 1000 chats: {elapsed:.1f}s, per instance {sorted(per_instance.values())}, "
        f"duplicates {duplicates}"
    )
    assert set(counts) == set(chats)
    assert duplicates == 0
    assert len(per_instance) == 2 and min(per_instance.values()) >= 100  # the work is shared
    assert pg_rows(url, "select status, count(*) from deliveries group by status") == [("sent", 1000)]


@pytest.mark.slow
def test_sigterm_mid_broadcast_loses_nothing(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    chats = list(range(3_000_001, 3_000_201))
    for cid in chats:
        fake.private_chat(cid)
    bot = BotProcess(fake, tmp_path, env={"TICK_SECONDS": "0.5", "SEND_RATE": "40"})
    migrate(bot.db_url, tmp_path)
    seed_due_chats(bot.db_url, chats)
    try:
        bot.start()
        fake.wait_for(lambda: len(fake.messages()) >= 60, 30, "60 pushes")
        assert bot.stop() == 0  # SIGTERM: finishes sends in flight, releases the rest
        assert "queued claim(s) released" in bot.log()
        halfway = len(fake.messages())
        assert halfway < len(chats)
        bot.start()
        fake.wait_for(lambda: len({m.chat_id for m in fake.messages()}) == len(chats), 60, "all pushes")
        time.sleep(1)
    finally:
        bot.stop()
    counts = Counter(m.chat_id for m in fake.messages())
    assert set(counts) == set(chats)
    assert max(counts.values()) == 1  # a graceful stop duplicates nothing


@pytest.mark.slow
def test_second_sqlite_instance_does_not_send(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    first = BotProcess(fake, tmp_path, env=webhook_env(free_port()))
    second = BotProcess(fake, tmp_path, env=webhook_env(free_port()))
    second.log_path = tmp_path / "second.log"
    first.start(wait=False)
    try:
        fake.wait_for(lambda: "HTTP server" in first.log(), 60, "first instance up")
        second.start(wait=False)
        fake.wait_for(lambda: "HTTP server" in second.log(), 60, "second instance up")
        assert "this instance will not send pushes" in second.log()
        assert "will not send pushes" not in first.log()
    finally:
        second.stop()
        first.stop()


@pytest.mark.slow  # admin commands over a large database: ~6 s
def test_admin_commands(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    bank = tmp_path / "bank"
    shutil.copytree(ROOT / "data", bank)
    bot = InProcessBot(fake, tmp_path, env={"ADMIN_IDS": "777", "BANK_PATH": str(bank)}).start()
    admin, stranger = fake.user(777, "Admin"), fake.user(778, "Stranger")
    try:
        stranger.send("/reload")
        (msg,) = stranger.expect()
        assert msg.text == "Не знаю команду /reload. Список команд — /help."
        admin.send("/bankstats")
        (msg,) = admin.expect()
        _, questions, tasks = shipped_counts()
        assert f"Банк: {counted(questions, 'questions', 'ru')}, {counted(tasks, 'tasks_short', 'ru')}, " in msg.text
        broken = bank / "questions" / "lora.yaml"
        broken.write_text(
            broken.read_text(encoding="utf-8").replace("topic: lora", "topic: lorra", 1), encoding="utf-8"
        )
        admin.send("/reload")
        rejected, report = admin.expect(2)
        assert "не прошёл проверку (1 проблема)" in rejected.text, rejected.text
        assert "lora.yaml:" in report.text and "unknown topic 'lorra'" in report.text
        admin.send("/q lora")  # the old bank is still served
        (q,) = admin.expect()
        assert "· LoRA ·" in q.text
        broken.write_text(
            broken.read_text(encoding="utf-8").replace("topic: lorra", "topic: lora", 1), encoding="utf-8"
        )
        admin.send("/reload")
        (ok,) = admin.expect()
        assert f"Банк перезагружен: {counted(questions, 'questions', 'ru')}, " in ok.text
        for cid in (779, 780):
            u = fake.user(cid)
            u.send("/daily 09:00")
            u.expect()
        fake.block(780)
        admin.send("/broadcast Завтра — разбор LoRA в 19:00")
        progress = admin.expect()[0]
        fake.wait_for(lambda: "завершена" in progress.text, 20, "broadcast to finish")
        assert "доставлено 1 из 2" in progress.text and "заблокирован в 1" in progress.text
        assert any("разбор LoRA" in m.text for m in fake.messages(779))
        admin.send("/usage")
        (usage,) = admin.expect()
        assert "Активные пользователи" in usage.text
    finally:
        bot.stop()
    assert query(bot.db_url, "select push_enabled from chats where id = 780") == [(0,)]


@pytest.mark.slow
def test_json_logs_carry_no_token_and_no_message_text(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    bot = BotProcess(fake, tmp_path, env={"LOG_FORMAT": "json"}).start()
    user = fake.user(8_000_001)
    try:
        user.send("/q 463")
        user.expect()
        user.send("Секретный текст ответа пользователя 12345")
        user.expect()
    finally:
        bot.stop()
    lines = [line for line in bot.log().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert {"ts", "level", "logger", "msg"} <= set(records[0])
    assert any(r["msg"].startswith("bot @") for r in records)
    assert "Секретный текст" not in bot.log()
    assert TOKEN not in bot.log()


def test_malformed_webhook_bodies_are_400_and_store_nothing() -> None:
    """The webhook's parser on the shapes that once gave 500 with a traceback (and, on SQLite,
    stored "abc" as an update id)."""
    from bot.tg.http_server import update_json, update_of

    def parse_update(body: bytes, bot: Any) -> Any:  # what the webhook's handler does with a body
        data = update_json(body)
        return update_of(data, bot) if data is not None else None

    bodies = [b"[]", b'"str"', b"123", b"null", b"{", b"\xff\xfe", b'{"update_id": 1, "message": "str"}',
              b'{"update_id": 9223372036854775808}', b'{"update_id": "abc"}', b'{"update_id": -1}',
              b'{"update_id": true}', b'{"message": {}}']  # fmt: skip
    for body in bodies:
        assert parse_update(body, None) is None, body
    update = parse_update(json.dumps(message_update(5, 42, "/help")).encode(), None)
    assert update is not None and update.update_id == 5 and update.message is not None
