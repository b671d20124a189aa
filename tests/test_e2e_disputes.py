"""«Это не ошибка»: a user disputes a charge of the grader, over the fake Bot API (issue 28) — in a
private chat, in a group (only the answer's author) and in a mock interview's report."""

from __future__ import annotations

import re

import pytest

from bot.bank import Bank, Question
from bot.core.grading import grade
from tests.conftest import BotProcess, shipped_bank
from tests.fakebot import BOT_USERNAME, FakeTelegram, Sent

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def charged_claim(bank: Bank, q: Question) -> str:
    """An answer that asserts one of the question's misconceptions, as a candidate would write it."""
    for m in q.misconceptions:
        text = f"Уверенно скажу так: {m.claim.rstrip('.')}. Это главное, что тут нужно знать."
        if grade(q, text, bank.lexicon).misconceptions:
            return text
    raise AssertionError(f"no misconception of {q.id} is charged on its own claim")


def score_of(message: Sent) -> int:
    found = re.search(r"(\d+)/100", message.text)
    assert found, message.text
    return int(found.group(1))


def test_a_charge_is_disputed_in_a_private_chat(fake: FakeTelegram, bot: BotProcess, uid: int, bank: Bank) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    answer = charged_claim(bank, bank.questions["q463"])
    user.send(answer)
    (fb,) = user.expect()
    assert "Вы написали: «Уверенно скажу так:" in fb.text and "— неверно:" in fb.text
    before = score_of(fb)
    (stored,) = bot.rows("select coverage from answers where user_id = ?", uid)[0]
    assert stored <= 0.3
    count = len(fake.callback_answers)
    user.press(fb, fb.button("Это не ошибка"))
    fake.wait_for(lambda: "Оспорено" in fb.text, 5, what="the feedback edited in place")
    assert fake.callback_answers[count]["text"].startswith("Понял, это не ошибка")
    assert "Вы написали" not in fb.text and "✓ Оспорено:" in fb.text
    assert "Это не ошибка" not in [label for label, _ in fb.buttons()]
    assert any("Знал" in label for label, _ in fb.buttons())  # the self-assessment is still to be done
    assert score_of(fb) >= before
    rows = bot.rows("select question_id, charge, sentence from disputes where user_id = ?", uid)
    assert len(rows) == 1 and rows[0][0] == "q463" and rows[0][1].startswith("m")
    assert rows[0][2].startswith("Уверенно скажу так:")
    (after,) = bot.rows("select coverage from answers where user_id = ?", uid)[0]
    assert after >= stored


def test_in_a_group_only_the_author_disputes(fake: FakeTelegram, bot: BotProcess, bank: Bank) -> None:
    chat = fake.group(-7301)
    anna = fake.user(731, "Anna").in_chat(chat)
    boris = fake.user(732, "Boris").in_chat(chat)
    anna.send(f"/q@{BOT_USERNAME} 463")
    (q,) = anna.expect()
    anna.send(charged_claim(bank, bank.questions["q463"]), reply_to=q.message_id)
    (fb,) = anna.expect()
    count = len(fake.callback_answers)
    boris.press(fb, fb.button("Это не ошибка"))
    fake.wait_for(lambda: len(fake.callback_answers) > count, 5)
    assert fake.callback_answers[count]["text"] == "Оспорить оценку может только автор ответа."
    assert bot.rows("select count(*) from disputes where user_id in (731, 732)") == [(0,)]
    assert "Вы написали" in fb.text
    anna.press(fb, fb.button("Это не ошибка"))
    fake.wait_for(lambda: "Оспорено" in fb.text, 5, what="the feedback edited in place")
    assert bot.rows("select user_id from disputes where user_id in (731, 732)") == [(731,)]


def test_a_charge_is_disputed_in_an_interview_report(fake: FakeTelegram, bot: BotProcess, uid: int, bank: Bank) -> None:
    user = fake.user(uid)
    user.send("/interview 1 lora")
    _, asked = user.expect(2)
    q = next(q for q in bank.questions.values() if q.topic == "lora" and q.text[:60] in asked.text)
    user.send(charged_claim(bank, q))
    fb, report = user.expect(2)
    assert "Вы написали" in fb.text
    assert "Итоги интервью" in report.text and "Вы написали" in report.text
    assert "Слабые темы: LoRA" in report.text

    # one sentence may assert two listed errors (lora-10's claim does): «Не ошибка: 1.1», «Не ошибка: 1.2»
    def left() -> list[str]:
        return [label for label, _ in report.buttons() if label.startswith("Не ошибка: 1")]

    charged = len(left())
    for n in range(charged, 0, -1):
        user.press(report, report.button(left()[0]))
        fake.wait_for(lambda n=n: len(left()) == n - 1, 5, what="the report shown again")
    assert "Вы написали" not in report.text
    assert "Не ошибка" not in " ".join(label for label, _ in report.buttons())
    (item,) = bot.rows(
        "select i.coverage from interview_items i join interviews v on v.id = i.interview_id where v.user_id = ?", uid
    )
    (answer,) = bot.rows("select coverage from answers where user_id = ?", uid)
    assert item == answer
    assert bot.rows("select count(*) from disputes where user_id = ?", uid) == [(charged,)]


def test_forget_deletes_my_disputes(fake: FakeTelegram, bot: BotProcess, uid: int, bank: Bank) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    user.send(charged_claim(bank, bank.questions["q463"]))
    (fb,) = user.expect()
    user.press(fb, fb.button("Это не ошибка"))
    fake.wait_for(lambda: "Оспорено" in fb.text, 5, what="the feedback edited in place")
    assert bot.rows("select count(*) from disputes where user_id = ?", uid) == [(1,)]
    user.send("/forget")
    (prompt,) = user.expect()
    user.press(prompt, prompt.button("Да, удалить всё"))
    fake.wait_for(lambda: any("Готово. Удалено" in m.text for m in fake.messages(uid)), 5)
    assert bot.rows("select count(*) from disputes where user_id = ?", uid) == [(0,)]
