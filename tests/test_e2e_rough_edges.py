"""Rough edges a new user hit (issue 32), played as a person would against the fake Bot API."""

from __future__ import annotations

import pytest

from tests.conftest import BotProcess
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


def test_a_greeting_after_a_question_is_asked_about_not_graded(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    for text in ("привет", "Спасибо!", "ок 👍"):
        user.send(text)
        (ask,) = user.expect()
        assert ask.text.startswith("Это ваш ответ на вопрос?") and "Оценка" not in ask.text, ask.text
        assert [label for label, _ in ask.buttons()] == ["Да, это ответ", "Нет"]
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]
    # narrow: a short real answer, even one that opens with thanks, is graded at once
    user.send("Спасибо, это пересчёт активаций в backward вместо хранения")
    (fb,) = user.expect()
    assert "Оценка:" in fb.text
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(1,)]

    en = fake.user(uid + 1, language_code="en")
    en.send("/q 463")
    en.expect()
    for text in ("hi", "Thanks!"):
        en.send(text)
        (ask,) = en.expect()
        assert ask.text.startswith("Is this your answer"), ask.text
    en.send("recompute")  # one real word is an answer
    (fb,) = en.expect()
    assert "Score:" in fb.text, fb.text
