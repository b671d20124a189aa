"""Grading as a user meets it, over the fake Bot API: a wrong claim corrected, a short reply
confirmed before it is stored (the LLM examiner: tests/test_e2e_llm.py)."""

from __future__ import annotations

import pytest

from tests.conftest import BotProcess, dev_answer, shipped_bank
from tests.fakebot import BOT_USERNAME, FakeTelegram

pytestmark = pytest.mark.e2e


def test_a_wrong_claim_is_corrected_and_not_headed_with_a_tick(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    claim = shipped_bank().questions["q463"].misconceptions[0]  # the bank the bot reads
    user.send(f"Уверенно скажу так: {claim.claim}. Это главное, что нужно знать.")
    (fb,) = user.expect()
    assert f"❌ Вы написали: «Уверенно скажу так: {claim.claim}.» — неверно:" in fb.text
    assert claim.correction[:40] in fb.text
    assert "Оценка:" in fb.text and "✅" not in fb.text.split("\n")[1]
    (score,) = bot.rows("select coverage from answers where user_id = ?", uid)[0]
    assert score <= 0.3


def test_a_one_character_reply_is_confirmed_before_it_is_stored(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    user.send("?")
    (ask,) = user.expect()
    assert "Это ваш ответ" in ask.text
    assert [label for label, _ in ask.buttons()] == ["Да, это ответ", "Нет"]
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]
    user.press(ask, ask.button("Нет"))
    (dropped,) = user.expect()
    assert "не сохраняю" in dropped.text
    assert bot.rows("select count(*) from answers where user_id = ?", uid) == [(0,)]

    user.send("ok")
    (ask,) = user.expect()
    user.press(ask, ask.button("Да, это ответ"))
    (fb,) = user.expect()
    assert "Ответ сохранён" in fb.text and "Оценка: 0/100" in fb.text
    assert bot.rows("select text from answers where user_id = ?", uid) == [("ok",)]


def test_in_a_group_only_the_author_confirms_a_short_reply(fake: FakeTelegram, bot: BotProcess) -> None:
    chat = fake.group(-7001)
    anna = fake.user(701, "Anna").in_chat(chat)
    boris = fake.user(702, "Boris").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    anna.send("?", reply_to=q.message_id)
    (ask,) = anna.expect()
    assert "Это ваш ответ" in ask.text
    before = len(fake.callback_answers)
    boris.press(ask, ask.button("Да, это ответ"))
    fake.wait_for(lambda: len(fake.callback_answers) > before, 5)
    assert fake.callback_answers[before]["text"] == "Это вопрос к автору сообщения."
    assert bot.rows("select count(*) from answers where chat_id = ?", -7001) == [(0,)]
    anna.press(ask, ask.button("Да, это ответ"))
    (fb,) = anna.expect()
    assert "Ответ сохранён" in fb.text
    assert bot.rows("select user_id, text from answers where chat_id = ?", -7001) == [(701, "?")]


def test_a_listed_error_in_other_words_is_quoted_over_the_bot_api(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    # rag-11 (number 1111): its misconception «дату или клиента можно просто дописать в текст запроса» said
    # with none of its predicate phrases; the grader's word models find it in the running bot
    user = fake.user(uid)
    user.send("/q 1111")
    user.expect()
    said = (
        "Фильтр по клиенту проще всего зашить в эмбеддинг: дописываем id клиента в текст чанка перед "
        "векторизацией, и поиск сам вернёт нужные документы."
    )
    user.send(f"Я бы делал гибридный поиск и reranker. {said}")
    (fb,) = user.expect()
    assert f"❌ Вы написали: «{said}» — неверно:" in fb.text
    assert "Это не ошибка" in str(fb.reply_markup)  # the charge can be disputed like any other


def test_a_comparison_and_a_thorough_answer_are_not_accused_over_the_bot_api(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    """ml-10 (number 1210): the right comparison names LightGBM after «по уровням», which is said of XGBoost;
    practical-4: grader_dev6's full answer states every key point and says focal loss «гасит вклад лёгких
    примеров» — its words lean to the listed «усиливает вклад лёгких», so the bot asks, it does not accuse."""
    user = fake.user(uid)
    user.send("/q 1210")
    user.expect()
    user.send(
        "Все три — бустинг на гистограммах. XGBoost по умолчанию растит деревья по уровням, LightGBM растёт "
        "по листьям, поэтому на малых данных легче переобучается; CatBoost строит симметричные деревья."
    )
    (fb,) = user.expect()
    assert "Вы написали" not in fb.text and "Уточните" not in fb.text, fb.text
    full = dev_answer("grader_dev6", "practical-04", "full")
    user.send("/q practical-4")
    user.expect()
    user.send(full)
    (fb,) = user.expect()
    assert "Вы написали" not in fb.text and "хороший ответ" in fb.text, fb.text
    assert "Уточните: «focal loss, который гасит вклад лёгких уже выученных примеров;» — вы имели в виду" in fb.text
    assert "Это не ошибка" not in str(fb.reply_markup)  # nothing to dispute: nothing was charged


def test_a_restricted_claim_and_the_cards_formulas_go_through_the_bot_api(
    fake: FakeTelegram, bot: BotProcess, uid: int
) -> None:
    """Two right answers of grader_dev7 the bot used to mark down, sent as a person would: the refuting
    answer to task t485 (beam search) says «оптимум гарантирован только если луч шире числа всех
    вариантов» and was charged with «всегда находит самую вероятную»; the short answer to general-9
    writes the card's formulas «y = x + F(x)» and «∂y/∂x = I + ∂F/∂x» and scored 0/100."""
    user = fake.user(uid)
    user.send("/q t485")
    user.expect()
    user.send(dev_answer("grader_dev7", "scratch-05", "refuting"))
    (fb,) = user.expect()
    assert "Вы написали" not in fb.text and "Это не ошибка" not in str(fb.reply_markup), fb.text
    user.send("/q general-9")
    user.expect()
    user.send(dev_answer("grader_dev7", "general-09", "short"))
    (fb,) = user.expect()
    assert "✓ Residual-блок считает y = x + F(x)" in fb.text and "слабо" not in fb.text, fb.text
