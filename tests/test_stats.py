"""Progress arithmetic (streaks in the user's zone, aggregation, bars), the chart and the texts."""

from __future__ import annotations

import io
import os
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from PIL import Image

from bot.core.schedule import get_tz
from bot.core.stats import (
    AnswerFact,
    aggregate,
    bar,
    percent,
    practice_days,
    streak,
    summarize,
)
from bot.db.user_data import ExportedAnswer
from bot.tg.chart import ChartRow, has_cyrillic_font, mastery_chart
from bot.tg.handlers.progress import (
    chart_caption,
    chart_rows,
    export_markdown,
    group_stats_text,
    stats_text,
    topic_specs,
)
from tests.conftest import shipped_bank, shipped_counts
from tests.fakebot import parse_html

MSK = ZoneInfo("Europe/Moscow")
LA = ZoneInfo("America/Los_Angeles")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def fact(qid: str, when: str, coverage: float | None = None, grade: int | None = None) -> AnswerFact:
    return AnswerFact(qid, at(when), coverage, grade)


# Streaks ---------------------------------------------------------------------------------------


def test_streak_counts_consecutive_days_and_survives_until_the_day_ends() -> None:
    days = {date(2026, 3, d) for d in (1, 2, 3, 5, 6)}
    today = streak(days, date(2026, 3, 6))
    assert (today.current, today.best, today.today) == (2, 3, True)
    # the next day, nothing yet: the streak is still alive, but not done today
    tomorrow = streak(days, date(2026, 3, 7))
    assert (tomorrow.current, tomorrow.today) == (2, False)
    # a whole day missed: broken
    assert streak(days, date(2026, 3, 8)).current == 0
    assert streak(days, date(2026, 3, 8)).best == 3


def test_streak_of_nothing_and_future_days_are_ignored() -> None:
    empty = streak([], date(2026, 3, 1))
    assert (empty.current, empty.best, empty.today) == (0, 0, False)
    skewed = streak([date(2026, 3, 1), date(2026, 3, 2)], date(2026, 3, 1))
    assert (skewed.current, skewed.today) == (1, True)


def test_streak_across_month_and_year_ends() -> None:
    days = [date(2025, 12, 30), date(2025, 12, 31), date(2026, 1, 1), date(2026, 1, 2)]
    assert streak(days, date(2026, 1, 2)).current == 4
    assert streak([date(2024, 2, 28), date(2024, 2, 29), date(2024, 3, 1)], date(2024, 3, 1)).current == 3


def test_days_are_counted_in_the_users_zone_not_utc() -> None:
    # 21:30 UTC on the 1st and 22:30 UTC on the 2nd are 00:30 and 01:30 in Moscow (the 2nd, the 3rd)
    # and 13:30/14:30 in Los Angeles (the 1st, the 2nd); 23:50 UTC on the 3rd is 02:50 on the 4th in Moscow.
    instants = [at("2026-03-01T21:30"), at("2026-03-02T22:30"), at("2026-03-03T23:50")]
    assert practice_days(instants, MSK) == {date(2026, 3, 2), date(2026, 3, 3), date(2026, 3, 4)}
    assert practice_days(instants, LA) == {date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)}
    assert practice_days(instants, UTC) == {date(2026, 3, 1), date(2026, 3, 2), date(2026, 3, 3)}


def test_two_answers_either_side_of_local_midnight_make_two_days() -> None:
    # 23:55 and 00:05 Moscow time: ten minutes apart, two local days, a streak of two
    late, early = at("2026-03-01T20:55"), at("2026-03-01T21:05")
    assert practice_days([late, early], MSK) == {date(2026, 3, 1), date(2026, 3, 2)}
    assert practice_days([late, early], UTC) == {date(2026, 3, 1)}
    facts = [AnswerFact("q1", late), AnswerFact("q2", early)]
    msk = aggregate([], facts, today=date(2026, 3, 2), tz=MSK)
    assert (msk.streak.current, msk.streak.today) == (2, True)
    utc = aggregate([], facts, today=date(2026, 3, 1), tz=UTC)
    assert utc.streak.current == 1


def test_streak_over_a_dst_change_and_with_a_fixed_offset_zone() -> None:
    # Los Angeles springs forward on 2026-03-08: local days still follow each other
    instants = [at("2026-03-07T20:00"), at("2026-03-08T20:00"), at("2026-03-09T20:00")]
    days = practice_days(instants, LA)
    assert days == {date(2026, 3, 7), date(2026, 3, 8), date(2026, 3, 9)}
    assert streak(days, date(2026, 3, 9)).current == 3
    # 'UTC+05:30' as stored by /daily: 19:00 UTC is already the next day
    plus = get_tz("UTC+05:30")
    assert practice_days([at("2026-03-01T19:00")], plus) == {date(2026, 3, 2)}


# Aggregation -----------------------------------------------------------------------------------

TOPICS = [("general", ["q1", "q2", "q3", "q4"]), ("lora", ["q5", "q6"]), ("agents", ["q7"])]


def test_aggregate_per_topic_uses_the_latest_signal_per_question() -> None:
    facts = [
        fact("q1", "2026-03-01T10:00", 0.2, 1),
        fact("q1", "2026-03-02T10:00", 0.8, None),  # later answer: coverage 0.8, grade stays 1
        fact("q2", "2026-03-02T11:00", None, 3),
        fact("q2", "2026-03-02T11:30", 0.5, None),
        fact("q5", "2026-03-02T12:00", 1.0, 2),
        fact("gone", "2026-03-02T12:30", 0.9, 3),  # no longer in the bank
    ]
    p = aggregate(TOPICS, facts, today=date(2026, 3, 2), tz=UTC)
    general, lora, agents = p.topics
    assert (general.answered, general.total) == (2, 4)
    assert general.coverage == pytest.approx((0.8 + 0.5) / 2)
    assert dict(general.grades) == {3: 1, 2: 0, 1: 1}
    assert general.share == 0.5
    assert general.mastery == pytest.approx(0.65 * 0.5)
    assert (lora.answered, lora.coverage, lora.mastery) == (1, 1.0, 0.5)
    assert (agents.answered, agents.coverage, agents.mastery) == (0, None, 0.0)
    assert (p.answers, p.questions, p.total) == (6, 4, 7)
    assert dict(p.grades) == {3: 2, 2: 1, 1: 1}
    assert p.graded == 4
    assert (p.streak.current, p.streak.best) == (2, 2)


def test_summarize_orders_by_time_not_by_input() -> None:
    facts = [fact("q1", "2026-03-02T10:00", 0.9, 3), fact("q1", "2026-03-01T10:00", 0.1, 1)]
    (s,) = summarize(facts).values()
    assert (s.answers, s.coverage, s.self_grade) == (2, 0.9, 3)


def test_coverage_is_clamped_and_unknown_grades_ignored() -> None:
    (s,) = summarize([fact("q1", "2026-03-01T10:00", 1.7, 9)]).values()
    assert (s.coverage, s.self_grade) == (1.0, None)


# Bars ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fraction", "expected"),
    [
        (0.0, "░░░░░░░░░░   0%"),
        (0.5, "▓▓▓▓▓░░░░░  50%"),
        (1.0, "▓▓▓▓▓▓▓▓▓▓ 100%"),
        (0.01, "▓░░░░░░░░░   1%"),  # something shows as something
        (0.996, "▓▓▓▓▓▓▓▓▓░  99%"),  # almost is not all
        (1.5, "▓▓▓▓▓▓▓▓▓▓ 100%"),
        (-1.0, "░░░░░░░░░░   0%"),
    ],
)
def test_bar(fraction: float, expected: str) -> None:
    assert bar(fraction) == expected


def test_bar_width_and_percent_rounding() -> None:
    assert bar(0.5, 6) == "▓▓▓░░░  50%"
    assert percent(0.125) == 13
    assert percent(0.004) == 1
    assert percent(0.0) == 0


# Texts, chart, export --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bank():  # type: ignore[no-untyped-def]

    return shipped_bank()


def test_stats_text_is_valid_telegram_html_with_bars(bank) -> None:  # type: ignore[no-untyped-def]
    facts = [
        fact("q463", "2026-03-01T10:00", 0.5, 2),
        fact("q463", "2026-03-02T10:00", 0.75, 3),
    ]
    p = aggregate(topic_specs(bank), facts, today=date(2026, 3, 2), tz=UTC)
    text = parse_html(stats_text(p, 4, bank, "ru"))
    assert f"Ответов: 2 · вопросов: 1 из {shipped_counts()[0]}" in text
    assert "Серия: 2 дня подряд" in text
    assert "К повторению сейчас: 4" in text
    assert "▓▓▓▓▓▓▓▓░░  75% покрытие ключевых пунктов" in text
    assert "▓▓▓▓▓▓▓▓▓▓ 100% знал" in text
    assert "Ещё не начаты: Общее 0/" in text
    en = parse_html(stats_text(p, 0, bank, "en"))
    assert "Answers: 2" in en and "key-point coverage" in en
    group = parse_html(group_stats_text(p, 4, bank, "ru", "<Анна>"))
    assert group.startswith("📊 <Анна>: ответов 2")
    assert "▓" not in group


def test_chart_is_a_png_with_a_row_per_topic(bank) -> None:  # type: ignore[no-untyped-def]
    p = aggregate(topic_specs(bank), [fact("q463", "2026-03-01T10:00", 0.5)], today=date(2026, 3, 1), tz=UTC)
    png = mastery_chart(chart_rows(p, bank, "ru"))
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.height > 30 * len(bank.topics)
    caption = chart_caption(p, bank, "ru")
    assert len(caption) <= 1024
    if os.environ.get("CI"):
        assert has_cyrillic_font(), ".ci/run installs fonts-dejavu-core"
    if has_cyrillic_font():  # the chart speaks the user's language; no slug legend
        assert "Распределённое обучение" in [r.label for r in chart_rows(p, bank, "ru")]
        assert "Distributed training" in [r.label for r in chart_rows(p, bank, "en")]
        assert "distributed —" not in caption and caption.startswith("Освоение тем")
    else:
        assert "distributed — Распределённое обучение" in caption
    # the bars are drawn: more dark-blue pixels for more mastery
    full = Image.open(io.BytesIO(mastery_chart([ChartRow("a", 1.0, 1.0)]))).convert("RGB")
    half = Image.open(io.BytesIO(mastery_chart([ChartRow("a", 1.0, 0.5)]))).convert("RGB")
    none = Image.open(io.BytesIO(mastery_chart([ChartRow("a", 1.0, 0.0)]))).convert("RGB")

    def dark(img: Image.Image) -> int:
        return sum(n for n, color in img.getcolors(1 << 16) or [] if color == (38, 99, 175))

    assert dark(full) > dark(half) * 1.5 > dark(none)


def test_chart_falls_back_to_ids_without_a_cyrillic_font(bank, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import bot.tg.chart as chart

    monkeypatch.setattr(chart, "FONT_PATHS", ())
    monkeypatch.setenv("CHART_FONT", "/nonexistent.ttf")
    p = aggregate(topic_specs(bank), [fact("q463", "2026-03-01T10:00", 0.5)], today=date(2026, 3, 1), tz=UTC)
    assert [r.label for r in chart_rows(p, bank, "ru")][:1] == [bank.topics[0].id]
    assert "distributed — Распределённое обучение" in chart_caption(p, bank, "ru")
    assert Image.open(io.BytesIO(mastery_chart(chart_rows(p, bank, "ru")))).format == "PNG"


def test_export_markdown_groups_by_topic_and_question(bank) -> None:  # type: ignore[no-untyped-def]
    def row(qid: str, text: str, when: str, **kw: object) -> ExportedAnswer:
        values: dict[str, object] = {"edited": False, "coverage": None, "self_grade": None}
        values.update(chat_id=1, chat_title=None)
        values.update(kw)
        return ExportedAnswer(qid, text, at(when), **values)  # type: ignore[arg-type]

    answers = [
        row("q463", "первый\n\nвторой абзац", "2026-03-01T21:30", coverage=0.5, self_grade=2),
        row("q463", "исправил", "2026-03-01T21:40", edited=True),
        row("no-such", "старый", "2026-03-01T10:00"),
        row("q472", "в группе", "2026-03-01T11:00", chat_id=-5, chat_title="ML club"),
    ]
    md = export_markdown(answers, bank, "ru", zone="Europe/Moscow", tz=MSK, now=at("2026-03-01T22:00"))
    assert md.startswith("# Мои ответы")
    assert "ответов: 4 · вопросов: 3" in md
    assert "### Вопрос 463. Что такое activation recomputation" in md
    assert (
        "**2026-03-02 00:30** · оценка 50/100 · самооценка: частично" in md
    )  # Moscow time; the score, as the chat says it
    assert "> первый\n>\n> второй абзац" in md
    assert "**2026-03-02 00:40** · исправленный" in md
    assert "в группе «ML club»" in md
    assert md.index("Вопрос 463") < md.index("Вопросы, которых больше нет") < md.index("### no-such")
    assert md.index("> первый") < md.index("> исправил")


def test_aggregate_timing_for_a_large_history() -> None:
    start = at("2025-01-01T08:00")
    facts = [AnswerFact(f"q{i % 100}", start + timedelta(hours=7 * i), 0.5, 1 + i % 3) for i in range(5000)]
    p = aggregate([("all", [f"q{i}" for i in range(100)])], facts, today=date(2029, 1, 1), tz=MSK)
    assert p.topics[0].answered == 100
    assert p.streak.best > 100


# Storage: scoped to one user, on SQLite and PostgreSQL --------------------------------------------


async def _seed(db_url: str):  # type: ignore[no-untyped-def]
    from bot.db import answers, asks
    from bot.db import chat_store as chats
    from bot.db.engine import Database
    from bot.db.models import Card, Delivery, Interview, InterviewItem, Poll, PollAnswer

    db = Database(db_url)
    await db.migrate()
    now = at("2026-03-01T10:00")
    async with db.write() as s:
        for uid in (1, 2):
            await chats.upsert_user(s, chats.UserInfo(uid, f"U{uid}"))
            await chats.upsert_chat(s, chats.ChatInfo(uid, "private"))
        await chats.upsert_chat(s, chats.ChatInfo(-100, "group", "Club"))
        for uid in (1, 2):
            own = await asks.record_ask(s, uid, "q463", user_id=uid, source="q", message_id=5)
            await answers.add_answer(s, answers.NewAnswer(ask=own, question_id="q463", user_id=uid, chat_id=uid,
                                                          message_id=6, text=f"private {uid}", coverage=0.5,
                                                          covered=[0], at=now))  # fmt: skip
            await asks.add_reveal(s, "q463", uid, uid)
            s.add(Card(user_id=uid, question_id="q463", state="{}", due=now, reps=1, auto_rated=False))
            interview = Interview(user_id=uid, chat_id=uid, size=1, status="open", topics="", position=0,
                                  started_at=now)  # fmt: skip
            s.add(interview)
            await s.flush()
            s.add(InterviewItem(interview_id=interview.id, position=0, question_id="q463", skipped=False))
        group_ask = await asks.record_ask(s, -100, "q463", user_id=1, source="q", message_id=7)
        for uid in (1, 2):
            await answers.add_answer(s, answers.NewAnswer(ask=group_ask, question_id="q463", user_id=uid,
                                                          chat_id=-100, message_id=8 + uid, text=f"group {uid}",
                                                          at=now))  # fmt: skip
        quiz = {"term_id": "lora", "correct_option": 0, "source": "quiz", "created_at": now}
        s.add(Poll(id="p-private", chat_id=1, **quiz))
        s.add(Poll(id="p-group", chat_id=-100, **quiz))
        await s.flush()
        vote = {"option": 0, "correct": True, "answered_at": now}
        for uid in (1, 2):
            s.add(PollAnswer(poll_id="p-group", user_id=uid, chat_id=-100, **vote))
        s.add(PollAnswer(poll_id="p-private", user_id=1, chat_id=1, **vote))
        s.add(Delivery(chat_id=1, local_date=date(2026, 3, 1), due_at=now, status="sent", attempts=1))
    return db


async def test_queries_see_only_the_given_user(db_url: str) -> None:
    from bot.db import cards, user_data

    db = await _seed(db_url)
    async with db.read() as s:
        facts = await user_data.answer_facts(s, 2)
        exported = await user_data.exported_answers(s, 2)
        due = await cards.due_questions(s, 2, at("2026-03-01T10:00"))
        not_yet = await cards.due_questions(s, 2, at("2026-03-01T09:59"))
        data = await user_data.stored_data(s, 1)
    assert len(facts) == 2
    assert [(a.text, a.chat_title) for a in exported] == [("private 2", None), ("group 2", "Club")]
    assert ([qid for qid, _ in due], not_yet) == (["q463"], [])
    assert (data.answers, data.group_answers, data.cards, data.interviews) == (2, 1, 1, 1)
    assert (data.poll_answers, data.reveals, data.profile, data.private_chat) == (2, 1, True, True)
    await db.close()


async def test_forget_user_deletes_everything_of_one_user_only(db_url: str) -> None:
    from sqlalchemy import func, select

    from bot.db import user_data
    from bot.db.models import Answer, Ask, Chat, ChatSeen, Delivery, InterviewItem, Poll, PollAnswer, User

    db = await _seed(db_url)
    async with db.write() as s:
        deleted = await user_data.forget_user(s, 1)
    assert (deleted.answers, deleted.group_answers, deleted.cards, deleted.interviews) == (2, 1, 1, 1)
    assert (deleted.poll_answers, deleted.reveals, deleted.profile, deleted.private_chat) == (
        2,
        1,
        True,
        True,
    )
    async with db.read() as s:
        assert await user_data.stored_data(s, 1) == user_data.UserData()
        assert await s.get(User, 1) is None and await s.get(Chat, 1) is None
        assert await s.get(Chat, -100) is not None  # the group stays
        for model, where in [
            (Ask, Ask.chat_id == 1), (Ask, Ask.user_id == 1), (ChatSeen, ChatSeen.chat_id == 1),
            (Delivery, Delivery.chat_id == 1), (Poll, Poll.chat_id == 1),
        ]:  # fmt: skip
            assert await s.scalar(select(func.count()).select_from(model).where(where)) == 0, model
        assert await s.scalar(select(func.count()).select_from(Ask).where(Ask.chat_id == -100)) == 1
        # the other user keeps everything
        assert await user_data.stored_data(s, 2) == user_data.UserData(2, 1, 1, 1, 1, 1, True, True)
        texts = (await s.scalars(select(Answer.text).order_by(Answer.text))).all()
        assert texts == ["group 2", "private 2"]
        assert await s.scalar(select(func.count()).select_from(InterviewItem)) == 1
        assert await s.scalar(select(func.count()).select_from(PollAnswer)) == 1
    async with db.write() as s:  # forgetting twice is harmless
        assert await user_data.forget_user(s, 1) == user_data.UserData()
    await db.close()
