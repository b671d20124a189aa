"""Practice that teaches, end to end: feedback on answers, self-assessment, FSRS review, mock interview."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import BotProcess, InProcessBot
from tests.daily_helpers import migrate, seed_due_chats
from tests.fakebot import FakeTelegram

pytestmark = pytest.mark.e2e


def test_feedback_shows_covered_points_and_hints(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    user.send(
        "Мы не храним все активации, а пересчитываем их на backward; платим лишним forward, "
        "это примерно +30% вычислений."
    )
    (fb,) = user.expect()
    assert "🟡 Оценка:" in fb.text and "— частично" in fb.text  # two of three core points: partial
    assert "Ключевые пункты: покрыто 2 из 5" in fb.text
    assert "✓ Активации не хранятся целиком" in fb.text
    assert "Что ещё стоит раскрыть:" in fb.text
    assert "• Зачем: активации растут с batch × seq × hidden × layers и доминируют в памяти." in fb.text
    assert [label for label, _ in fb.buttons()][:3] == ["Знал", "Частично", "Не знал"]
    ((score, covered),) = bot.rows("select coverage, covered from answers where user_id = ?", uid)
    assert covered == "0,2" and 0.35 <= score < 0.7

    before = len(fake.callback_answers)
    user.press(fb, fb.button("Знал"))
    fake.wait_for(lambda: len(fake.callback_answers) > before, 5)
    assert fake.callback_answers[before]["text"] == "Записал: Знал. Повторим через 2 дня."
    fake.wait_for(lambda: "Знал" not in [label for label, _ in fb.buttons()], 5)  # keyboard edited
    # only the self-assessment row is replaced, by the chosen grade; the answer, its details and
    # «Следующий» stay
    assert [label for label, _ in fb.buttons()] == ["✓ Знал", "Показать ответ", "Подробнее", "Следующий"]
    assert bot.rows("select self_grade from answers where user_id = ?", uid) == [(3,)]
    ((due, reps),) = bot.rows("select due, reps from cards where user_id = ? and question_id = 'q463'", uid)
    assert reps == 1  # the self-assessment replaced the automatic rating instead of adding a review
    assert datetime.fromisoformat(str(due)).replace(tzinfo=UTC) > datetime.now(UTC) + timedelta(days=1)


def test_keyword_list_is_not_a_full_answer(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/q 463")
    user.expect()
    user.send("recompute, backward, forward, sqrt, torch.utils.checkpoint, memory, OOM, 30%")
    (fb,) = user.expect()
    assert "Похоже на список терминов" in fb.text
    ((score,),) = bot.rows("select coverage from answers where user_id = ?", uid)
    assert score is not None


def test_review_asks_due_questions_most_overdue_first(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/review")
    (msg,) = user.expect()
    assert "Сейчас нечего повторять" in msg.text
    for number in ("463", "469"):
        user.send(f"/q {number}")
        user.expect()
        user.send("Не знаю, что-то про память")
        user.expect()
    now = datetime.now(UTC).replace(tzinfo=None)
    bot.rows(
        "update cards set due = ? where user_id = ? and question_id = 'q469'",
        str(now - timedelta(days=3)),
        uid,
    )
    bot.rows(
        "update cards set due = ? where user_id = ? and question_id = 'q463'",
        str(now - timedelta(days=1)),
        uid,
    )
    user.send("/review")
    (q,) = user.expect()
    assert "Повторение · к повторению: 2" in q.text and "Вопрос 469" in q.text
    user.send("Master-веса в fp32, forward и backward в fp16, loss scaling против underflow")
    (fb,) = user.expect()
    assert "Дальше по повторению" in [label for label, _ in fb.buttons()]
    user.press(fb, fb.button("Знал"))
    user.press(fb, fb.button("Дальше по повторению"))
    (q2,) = user.expect()
    assert "Вопрос 463" in q2.text and "к повторению: 1" in q2.text


def test_mock_interview_report(fake: FakeTelegram, bot: BotProcess, uid: int) -> None:
    user = fake.user(uid)
    user.send("/interview 3 lora 2m")
    intro, q1 = user.expect(2)
    assert "Мок-интервью: 3 вопроса по темам: LoRA · ⏱ 2:00" in intro.text
    assert "Интервью · вопрос 1/3" in q1.text and "⏱ На ответ: 2:00" in q1.text
    assert q1.buttons() == []
    user.send(
        "LoRA замораживает исходные веса и обучает низкоранговую добавку B·A ранга r, "
        "так что обучаемых параметров r·(d+k) вместо d·k."
    )
    fb, q2 = user.expect(2)
    assert "Ключевые пункты: покрыто" in fb.text
    assert "Интервью · вопрос 2/3" in q2.text
    user.press(fb, fb.button("Частично"))
    user.send("/skip")
    skipped, q3 = user.expect(2)
    assert "пропущен" in skipped.text and "вопрос 3/3" in q3.text
    user.send("не знаю")
    _, report = user.expect(2)
    assert "Итоги интервью · 3 вопроса" in report.text
    assert "Частично" in report.text and "пропущен" in report.text
    assert "Общий балл:" in report.text and "Слабые темы: LoRA" in report.text
    assert [label for label, _ in report.buttons()] == ["Ответ 1", "Ответ 2", "Ответ 3"]
    assert bot.rows("select status, size from interviews where user_id = ?", uid) == [("finished", 3)]
    user.press(report, report.button("Ответ 2"))
    (ref,) = user.expect()
    assert "Эталонный ответ" in ref.text


def test_interview_survives_a_restart_and_can_be_abandoned(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    bot = InProcessBot(fake, tmp_path).start()
    user = fake.user(4711)
    try:
        user.send("/interview 3")
        user.expect(2)
        user.send("Регуляризация: L2, dropout, early stopping, аугментации данных")
        user.expect(2)
        bot.stop()
        bot.start()
        user.send("/interview")
        (prompt,) = user.expect()
        assert "незаконченное интервью (1/3)" in prompt.text
        user.press(prompt, prompt.button("Продолжить"))
        (q2,) = user.expect()
        assert "Интервью · вопрос 2/3" in q2.text
        user.send("/interview stop")
        (report,) = user.expect()
        assert "Итоги интервью · 1 вопрос" in report.text
        assert bot.rows("select status from interviews") == [("abandoned",)]
    finally:
        bot.stop()


def test_daily_push_prefers_due_questions(own_fake: FakeTelegram, tmp_path: Path) -> None:
    fake = own_fake
    chat_id = 4712
    fake.private_chat(chat_id)
    bot = InProcessBot(fake, tmp_path, env={"TICK_SECONDS": "0.5"})
    migrate(bot.db_url, tmp_path)
    seed_due_chats(bot.db_url, [chat_id])
    past = (datetime.now(UTC) - timedelta(days=2)).replace(tzinfo=None)
    with sqlite3.connect(bot.db_url.removeprefix("sqlite:///")) as conn:
        conn.execute(
            "insert into users (id, first_name, board_opt_out, created_at, last_seen_at) values (?, 'U', 0, ?, ?)",
            (chat_id, str(past), str(past)),
        )
        conn.execute(
            "insert into cards (user_id, question_id, state, due, reps, auto_rated) values (?, 'q485', '', ?, 1, 0)",
            (chat_id, str(past)),
        )
    try:
        bot.start()
        fake.wait_for(lambda: any("Вопрос дня" in m.text for m in fake.messages(chat_id)), 15, "the push")
    finally:
        bot.stop()
    push = next(m for m in fake.messages(chat_id) if "Вопрос дня" in m.text)
    assert "Вопрос 485" in push.text
