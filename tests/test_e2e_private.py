"""A new user in a private chat, end to end: the bot process against the fake Bot API server."""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import BotProcess
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


def rows(bot: BotProcess, sql: str, *args: object) -> list[tuple[object, ...]]:
    path = bot.db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        return conn.execute(sql, args).fetchall()


def test_start_shows_welcome_and_menu(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, "Анна")
    user.send("/start")
    (msg,) = user.expect()
    assert "Привет, Анна" in msg.text
    assert "106" not in msg.text  # counts are questions and tasks separately
    assert "95 вопросов и 11 практических задач" in msg.text
    assert msg.reply_markup["keyboard"][0][0]["text"] == "🎲 Вопрос"


def test_commands_registered_per_language(fake: FakeTelegram, bot: BotProcess) -> None:
    assert {c["command"] for c in fake.commands["ru"]} >= {"q", "answer", "glossary", "search"}
    assert fake.commands["en"][0]["description"] != fake.commands["ru"][0]["description"]


def test_question_answer_reveal_loop(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    (question,) = user.expect()
    assert "Что такое activation recomputation (checkpointing) и зачем оно нужно" in question.text
    assert [label for label, _ in question.buttons()] == ["Показать ответ", "Глоссарий", "Следующий"]

    answer = "Не храним активации, а пересчитываем их в backward — экономия памяти ценой вычислений."
    user.send(answer)
    (confirm,) = user.expect()
    assert "Ответ сохранён" in confirm.text
    stored = rows(bot, "select question_id, text from answers where user_id = ?", uid)
    assert stored == [("q463", answer)]

    user.press(confirm, confirm.button("Показать ответ"))
    got = user.expect(2)
    assert "Ваш ответ" in got[0].text and answer in got[0].text
    assert "Эталонный ответ" in got[1].text and "Ключевые пункты" in got[1].text
    terms = [label for label, data in got[1].buttons() if data.startswith("t:")]
    assert any("Чекпоинт" in label or "Checkpoint" in label for label in terms)
