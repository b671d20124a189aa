"""Quiz polls and group play, end to end: the bot process against the fake Bot API server."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from bot.core.quiz import option_label, topic_terms
from bot.tg.handlers.quiz import format_points
from tests.conftest import BotProcess, shipped_bank, wait_until
from tests.fakebot import BOT_USERNAME, FakeTelegram, FakeUser, Sent

pytestmark = pytest.mark.e2e

BANK = shipped_bank()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeTelegram]:
    server = FakeTelegram().start()
    yield server
    server.stop()


def vote(user: FakeUser, poll_id: str, option: int | None) -> None:
    """The member taps an option (None: retracts the vote): a ``poll_answer`` update."""
    user.answer_poll(poll_id, option)


def next_poll(fake: FakeTelegram, bot: BotProcess, chat_id: int, before: int) -> tuple[Sent, dict[str, Any]]:
    """The quiz poll the bot sent after ``before`` messages, once it is recorded."""
    fake.wait_for(lambda: any(m.method == "sendPoll" for m in fake.messages(chat_id)[before:]), 10, "a quiz poll")
    message = next(m for m in fake.messages(chat_id)[before:] if m.method == "sendPoll")
    poll = next(p for p in fake.polls.values() if p["chat_id"] == chat_id and p["message_id"] == message.message_id)
    wait_until(lambda: bot.rows("select 1 from polls where id = ?", poll["id"]) != [])
    return message, poll


def answers_of(bot: BotProcess, user_id: int) -> int:
    return len(bot.rows("select 1 from answers where user_id = ?", user_id))


def next_text(fake: FakeTelegram, chat_id: int, before: int, needle: str) -> Sent:
    fake.wait_for(lambda: any(needle in m.text for m in fake.messages(chat_id)[before:]), 10, needle)
    return next(m for m in fake.messages(chat_id)[before:] if needle in m.text)


def test_quiz_in_private_is_a_valid_quiz_poll(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, "Анна")
    user.send("/quiz lora")
    message, poll = next_poll(fake, bot, uid, 0)
    params = message.params
    assert params["type"] == "quiz" and params["is_anonymous"] is False
    assert poll["type"] == "quiz" and poll["is_anonymous"] is False
    assert len(poll["options"]) == 4 and 1 <= len(poll["question"]) <= 300
    assert all(1 <= len(o["text"]) <= 100 for o in poll["options"])
    explanation = params["explanation"]
    assert len(explanation) <= 200 and explanation.count("\n") <= 2
    # the right option names the glossary term the poll is about, and that term belongs to LoRA
    ((term_id, correct),) = bot.rows("select term_id, correct_option from polls where id = ?", poll["id"])
    assert poll["correct_option_id"] == correct
    term = BANK.terms[term_id]
    assert term_id in topic_terms(BANK, "lora")
    texts = [o["text"] for o in poll["options"]]
    if poll["question"].startswith("🧩 Какой это термин?"):
        assert texts[correct] == option_label(term, "ru")
    else:
        assert option_label(term, "ru") in poll["question"] and texts[correct] in term.definition
    assert f"✅ {option_label(term, 'ru')}" in explanation
    # a wrong answer is stored as wrong, then changed to the right one
    vote(user, poll["id"], (correct + 1) % 4)
    wait_until(lambda: bot.rows("select correct from poll_answers where poll_id = ?", poll["id"]) == [(0,)])
    vote(user, poll["id"], correct)
    wait_until(lambda: bot.rows("select correct from poll_answers where poll_id = ?", poll["id"]) == [(1,)])
    vote(user, poll["id"], None)
    wait_until(lambda: bot.rows("select 1 from poll_answers where poll_id = ?", poll["id"]) == [])
    # a term as the argument: the quiz is about that term; an unknown word is explained
    before = len(fake.messages(uid))
    user.send("/quiz kv cache")
    _, poll = next_poll(fake, bot, uid, before)
    assert bot.rows("select term_id from polls where id = ?", poll["id"]) == [("kv-cache",)]
    user.send("/quiz абракадабра")
    (reply,) = user.expect()
    assert "Не знаю темы «абракадабра»" in reply.text
    user.send("/top")
    (reply,) = user.expect()
    assert "только в группах" in reply.text


def test_group_quiz_answers_and_leaderboard(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-7001, "ML study")
    anna = fake.user(7101, "Anna").in_chat(chat)
    boris = fake.user(7102, "Boris").in_chat(chat)
    vera = fake.user(7103, "Vera <3").in_chat(chat)

    # a quiz: Anna right, Boris wrong
    anna.send(f"/quiz@{BOT_USERNAME}")
    _, poll = next_poll(fake, bot, chat.id, 0)
    correct = poll["correct_option_id"]
    vote(anna, poll["id"], correct)
    vote(boris, poll["id"], (correct + 1) % 4)
    wait_until(lambda: len(bot.rows("select 1 from poll_answers where poll_id = ?", poll["id"])) == 2)

    # answers by reply: Anna answers two questions, Vera one
    for qref, author, text in (
        ("463", anna, "Не храним все активации, а пересчитываем их в backward: память в обмен на вычисления"),
        ("t13", anna, "S3 дешевле и надёжнее, EBS быстрее, но привязан к зоне"),
        ("463", vera, "не знаю"),
    ):
        before = len(fake.messages(chat.id))
        author.send(f"/q@{BOT_USERNAME} {qref}")
        question = next_text(fake, chat.id, before, "Отвечайте реплаем")
        stored = answers_of(bot, author.id)
        author.send(text, reply_to=question.message_id)
        wait_until(lambda: answers_of(bot, author.id) > stored)  # noqa: B023 - used within the iteration
    # Boris answered a month ago: all time, not this week
    with sqlite3.connect(bot.db_url.removeprefix("sqlite:///")) as conn:
        conn.execute(
            "insert into answers (question_id, user_id, chat_id, text, edited, coverage, created_at) "
            "values ('q464', ?, ?, 'old answer', 0, 1.0, datetime('now', '-30 days'))",
            (boris.id, chat.id),
        )

    def expected(uid: int) -> float:
        best = bot.rows("select question_id, max(coalesce(coverage, 0)) from answers "
                         "where user_id = ? and chat_id = ? group by question_id", uid, chat.id)  # fmt: skip
        quiz = bot.rows("select count(*) from poll_answers where user_id = ? and correct = 1", uid)[0][0]
        return sum(1 + 2 * b for _, b in best) + quiz

    anna_points, vera_points = expected(anna.id), expected(vera.id)
    assert anna_points >= 3 > vera_points >= 1

    before = len(fake.messages(chat.id))
    boris.send(f"/top@{BOT_USERNAME}")
    board = next_text(fake, chat.id, before, "Рейтинг группы")
    lines = board.text.splitlines()
    assert "эта неделя" in lines[0]
    assert lines[2] == f"🥇 Anna — {format_points(anna_points, 'ru')} (💬 2 · 🧩 1)"
    assert lines[3] == f"🥈 Vera <3 — {format_points(vera_points, 'ru')} (💬 1 · 🧩 0)"
    assert "Boris" not in board.text  # a wrong quiz answer and an old answer: nothing this week
    assert "Vera &lt;3" in board.raw  # names are escaped

    # all time: Boris's old answer (1 + 2·1.0 = 3 points) counts
    boris.press(board, board.button("Всё время"))
    fake.wait_for(lambda: "всё время" in board.text, 10, "the board to switch to all time")
    assert any(line.endswith("Boris — 3 балла (💬 1 · 🧩 0)") for line in board.text.splitlines())
    assert board.text.index("Anna") < board.text.index("Boris") or anna_points < 3
    boris.press(board, board.button("Эта неделя"))
    fake.wait_for(lambda: "эта неделя" in board.text, 10, "the board to switch back")
    assert "Boris" not in board.text

    # opting out: Anna by command, Vera by the button
    before = len(fake.messages(chat.id))
    anna.send(f"/top@{BOT_USERNAME} off")
    assert "больше не видны" in next_text(fake, chat.id, before, "Anna").text
    assert bot.rows("select board_opt_out from users where id = ?", anna.id) == [(1,)]
    vera.press(board, board.button("Скрыть"))
    fake.wait_for(lambda: "Vera" not in board.text, 10, "Vera to leave the board")
    assert "Anna" not in board.text and "Пока никто не набрал баллов" in board.text
    before = len(fake.messages(chat.id))
    anna.send(f"/top@{BOT_USERNAME} on")
    next_text(fake, chat.id, before, "снова в рейтинге")
    before = len(fake.messages(chat.id))
    anna.send(f"/top@{BOT_USERNAME}")
    board = next_text(fake, chat.id, before, "Рейтинг группы")
    assert "🥇 Anna" in board.text and "Vera" not in board.text
