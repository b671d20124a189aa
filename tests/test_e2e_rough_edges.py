"""Rough edges a new user hit (issue 32), played as a person would against the fake Bot API."""

from __future__ import annotations

import re

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


def test_an_english_quiz_is_english_with_the_russian_definition_labelled(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    user = fake.user(uid, language_code="en")
    user.send("/lang en")
    user.expect()
    for _ in range(3):
        before = len(fake.messages(uid))
        user.send("/quiz")
        fake.wait_for(lambda n=before: any(m.method == "sendPoll" for m in fake.messages(uid)[n:]), 10, "a quiz poll")
        message = next(m for m in fake.messages(uid)[before:] if m.method == "sendPoll")
        params = message.params
        prompt, definition = params["question"].split("\n", 1)
        assert prompt == "🧩 Which term is this? The definition, in Russian:"
        assert re.search("[а-яё]", definition)  # the bank's text, as it is
        for option in params["options"]:
            text = option if isinstance(option, str) else option["text"]
            assert not re.search("[а-яёА-ЯЁ`]", text), params["options"]
        explanation = params["explanation"]
        assert explanation.startswith("✅ ") and "\nMore: /glossary " in explanation
        assert not re.search("[а-яёА-ЯЁ…`]", explanation), explanation


def test_in_english_the_russian_bank_text_is_labelled_and_never_mid_sentence(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    """Under /lang en the frame is English and the bank's Russian text stands on lines of its own,
    with one «in Russian» label per message."""
    user = fake.user(uid, language_code="en")
    user.send("/lang en")
    user.expect()
    user.send("/q 463")
    (question,) = user.expect()
    assert question.text.count("in Russian") == 1
    user.send("Gradient checkpointing saves weights to disk and speeds up training.")
    (feedback,) = user.expect()
    assert "this is wrong. In fact:" in feedback.text
    user.press(feedback, feedback.button("Show answer"))
    (answer,) = user.expect()
    for message in (question, feedback, answer):
        assert message.text.count("in Russian") == 1, message.text
        for line in message.text.split("\n"):
            # a line of Russian holds no English frame around it (the user's own words, quoted, aside)
            frame = re.sub(r"“[^”]*”", "", line)
            if re.search("[а-яё]", frame, re.IGNORECASE):
                assert not re.search(r"\b(wrong|In fact|Score|covered|ask next|Question|You wrote)\b", frame), line


def test_english_search_and_term_card_label_the_russian_text(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid, language_code="en")
    user.send("/lang en")
    user.expect()
    user.send("/search kv cache")
    (found,) = user.expect()
    assert found.text.split("\n")[0].endswith("· the questions are in Russian")
    user.send("/glossary kv cache")
    (card,) = user.expect()
    assert card.text.count("The definition, in Russian:") == 1
    ru = fake.user(uid + 1)
    ru.send("/glossary kv cache")
    (card_ru,) = ru.expect()
    assert "in Russian" not in card_ru.text and "\n\n\n" not in card_ru.text
