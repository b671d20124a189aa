"""Real chat traffic: one busy chat never stalls the others, and a flood is answered at the chat's
pace, once. The fake Bot API enforces Telegram's rates here (20 messages a minute in a group)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import InProcessBot
from tests.fakebot import BOT_USERNAME, FakeTelegram

pytestmark = pytest.mark.e2e


@pytest.fixture
def strict() -> Iterator[FakeTelegram]:
    server = FakeTelegram(strict_rates=True).start()
    yield server
    server.stop()


def unrelated_q_latency(fake: FakeTelegram, user_id: int) -> float:
    """How long an unrelated private user waits for /q."""
    user = fake.user(user_id)
    started = time.monotonic()
    user.send("/q")
    (question,) = user.expect(timeout=60)
    assert "Вопрос" in question.text or "#" in question.text
    return time.monotonic() - started


def test_a_command_flood_in_a_group_does_not_stall_others(strict: FakeTelegram, tmp_path: Path) -> None:
    fake = strict
    bot = InProcessBot(fake, tmp_path).start()
    try:
        fake.user(9_100_001).send("/start")  # the unrelated user is known already
        fake.user(9_100_001).expect(timeout=10)
        chat = fake.group(-9_100_000)
        member = fake.user(9_100_002).in_chat(chat)
        for _ in range(100):
            member.send(f"/help@{BOT_USERNAME}")
        time.sleep(0.3)  # the flood is queued
        latency = unrelated_q_latency(fake, 9_100_001)
        time.sleep(2)
        helps = [m for m in fake.messages(chat.id) if m.method == "sendMessage"]
    finally:
        bot.stop()
    print(f"\n/q during a 100 × /help flood in a group: {latency:.2f} s; {len(helps)} group replies")
    assert latency < 2
    assert 1 <= len(helps) <= 20  # not 100: a waiting duplicate is answered once, at most 20 in 2 s
    assert fake.rate_violations == []


@pytest.mark.slow  # 150 members' answers through the fake: ~6 s
def test_a_150_member_answer_burst_does_not_stall_others(strict: FakeTelegram, tmp_path: Path) -> None:
    fake = strict
    bot = InProcessBot(fake, tmp_path).start()
    try:
        fake.user(9_200_001).send("/start")
        fake.user(9_200_001).expect(timeout=10)
        chat = fake.group(-9_200_000)
        asker = fake.user(9_200_002).in_chat(chat)
        asker.send(f"/q@{BOT_USERNAME} 463")
        (question,) = asker.expect()
        members = [fake.user(9_200_100 + i, f"M{i}").in_chat(chat) for i in range(150)]
        for i, member in enumerate(members):
            member.send(
                f"Ответ {i}: пересчитываем активации на backward, экономим память", reply_to=question.message_id
            )
        time.sleep(0.3)
        latency = unrelated_q_latency(fake, 9_200_001)
        fake.wait_for(lambda: bot.rows("select count(*) from answers where chat_id = ?", chat.id)[0][0] >= 5, 20)
    finally:
        bot.stop()
    print(f"\n/q during a 150-member answer burst in a group: {latency:.2f} s")
    assert latency < 2
    assert fake.rate_violations == []


def test_a_private_flood_is_answered_at_its_pace_and_once_per_command(fake: FakeTelegram, bot: InProcessBot) -> None:
    flooder, other = fake.user(9_300_001), fake.user(9_300_002)
    for _ in range(300):
        flooder.send("/help")
    time.sleep(0.2)
    latency = unrelated_q_latency(fake, other.id)
    time.sleep(1.5)
    helps = [m for m in fake.messages(flooder.chat.id) if m.method == "sendMessage"]
    print(f"\n/q during a 300-message private flood: {latency:.2f} s; {len(helps)} replies to the flooder")
    assert latency < 2
    # not 300: a command already waiting from the user is answered once, and no more than 20 of one
    # user's commands in 2 seconds are taken (the flood reaches the bot within one or two windows)
    assert 1 <= len(helps) <= 40
