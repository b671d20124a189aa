"""The use-case layer (bot/services) in-process on SQLite: what a user would notice of each flow."""

from __future__ import annotations

import ast
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import bot.services
from bot.bank import Question
from bot.db import answers as answer_store
from bot.db import chat_store
from bot.db.engine import Database
from bot.services import answers, asking, chats, daily, interviews, quizzes, revealing, user_data
from bot.services.deps import Deps
from bot.services.grading import KeywordGrader
from tests.conftest import shipped_catalog

CATALOG = shipped_catalog()
BANK = CATALOG.bank
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday
USER = 7
GROUP = -100


def clock() -> datetime:
    return NOW


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    """Each flow on SQLite (a sync session on the loop) and on PostgreSQL (asyncpg): the hot paths'
    prepared statements run on either."""
    database = Database(db_url)
    await database.migrate()
    async with database.write() as session:
        await chat_store.upsert_user(session, chat_store.UserInfo(USER, "Anna", "anna", "ru"))
        await chat_store.upsert_chat(session, chat_store.ChatInfo(USER, "private"))
        await chat_store.upsert_chat(session, chat_store.ChatInfo(GROUP, "supergroup", "ML"))
    yield database
    await database.close()


def a_question() -> Question:
    return next(q for q in BANK.questions.values() if q.kind == "question" and len(q.key_points) >= 2)


async def answer(db: Database, q: Question, text: str, *, chat_id: int = USER) -> answers.Submitted:
    ask = await asking.record_ask(db, chat_id=chat_id, question_id=q.id, user_id=USER, source="q")
    attempt = answers.Attempt(ask, q, USER, chat_id, None, text, "ru")
    return await answers.submit(Deps(db, KeywordGrader(BANK.lexicon), clock), BANK, attempt)


# -- asking -----------------------------------------------------------------------------------


async def test_choose_next_stays_in_the_topic_and_a_new_round_is_noticed(db: Database) -> None:
    topic = next(t.id for t in BANK.topics if 2 <= len(BANK.candidates(t.id)) <= 40)
    ids = set(BANK.candidates(topic))
    deps = Deps(db, rng=random.Random(1))
    for n in range(len(ids)):
        choice = await asking.choose_next(deps, BANK, chat_id=USER, topic=topic, chat_filter=None)
        assert choice.question is not None and choice.question.id in ids
        assert choice.source == "topic" and choice.next_topic == topic
        assert not choice.new_round, n
        await asking.record_ask(db, chat_id=USER, question_id=choice.question.id, user_id=USER, source="topic")
    again = await asking.choose_next(deps, BANK, chat_id=USER, topic=topic, chat_filter=topic)
    assert again.new_round  # every question of the topic was shown once
    assert again.source == "q" and again.next_topic is None  # the chat's own filter is no explicit topic


def test_resolve_finds_numbers_topics_and_words() -> None:
    numbered = next(q for q in BANK.questions.values() if q.number is not None and q.kind == "question")
    assert asking.resolve(CATALOG, f"#{numbered.number}").question == numbered
    assert asking.resolve(CATALOG, "999999").kind == "not_found"
    topic = BANK.topics[0]
    assert asking.resolve(CATALOG, topic.title_ru) == asking.Resolved("topic", topic=topic.id)
    assert asking.resolve(CATALOG, "zzzzqqqxxy").kind == "nothing"


async def test_a_question_that_could_not_be_sent_is_forgotten(db: Database) -> None:
    q1, q2 = list(BANK.questions.values())[:2]
    first = await asking.record_ask(db, chat_id=USER, question_id=q1.id, user_id=USER, source="q")
    second = await asking.record_ask(db, chat_id=USER, question_id=q2.id, user_id=USER, source="q")
    await asking.cancel_ask(db, second, previous_pending=first.id)
    async with db.read() as session:
        chat = await chat_store.get_chat(session, USER)
        seen = await chat_store.seen_counts(session, USER)
    assert chat is not None and chat.pending_ask_id == first.id
    assert seen.get(q2.id, 0) == 0


# -- answering --------------------------------------------------------------------------------


async def test_an_answer_is_stored_graded_and_its_card_due_later(db: Database) -> None:
    q = a_question()
    done = await answer(db, q, q.answer)
    assert done.outcome is not None and done.outcome.grade.score > 0 and not done.again
    async with db.read() as session:
        stored = await answer_store.latest_answer(session, USER, q.id)
    assert stored is not None and stored.text == q.answer and stored.coverage == done.outcome.grade.score
    review = await asking.due_review(db, BANK, user_id=USER, now=NOW)
    assert review.question is None and review.upcoming is not None and review.upcoming > NOW
    later = await asking.due_review(db, BANK, user_id=USER, now=review.upcoming + timedelta(minutes=1))
    assert later.question == q and later.due == 1


async def test_a_second_answer_to_the_same_ask_is_noticed_and_an_edit_kept(db: Database) -> None:
    q = a_question()
    ask = await asking.record_ask(db, chat_id=USER, question_id=q.id, user_id=USER, source="q")
    deps = Deps(db, KeywordGrader(BANK.lexicon), clock)
    for text, again in (("first try at it", False), ("second, longer try at it", True)):
        attempt = answers.Attempt(ask, q, USER, USER, 50 if again else 40, text, "en")
        done = await answers.submit(deps, BANK, attempt)
        assert done.again is again
    assert await answers.record_edit(db, chat_id=USER, message_id=50, user_id=USER, text="edited")
    assert not await answers.record_edit(db, chat_id=USER, message_id=999, user_id=USER, text="not an answer")
    async with db.read() as session:
        latest = await answer_store.latest_answer(session, USER, q.id)
    assert latest is not None and latest.text == "edited" and latest.edited
    assert (await user_data.stored(db, user_id=USER)).answers == 3  # every text is kept


async def test_find_ask_prefers_the_replied_question(db: Database) -> None:
    q1, q2 = list(BANK.questions.values())[:2]
    replied = await asking.record_ask(db, chat_id=USER, question_id=q1.id, user_id=USER, source="q")
    await asking.note_message(db, replied, 10)
    pending = await asking.record_ask(db, chat_id=USER, question_id=q2.id, user_id=USER, source="q")
    found = await answers.find_ask(db, chat_id=USER, replied_message_id=10, pending_ask_id=pending.id)
    assert found is not None and found.id == replied.id
    found = await answers.find_ask(db, chat_id=USER, replied_message_id=None, pending_ask_id=pending.id)
    assert found is not None and found.id == pending.id
    assert await answers.find_ask(db, chat_id=USER, replied_message_id=None, pending_ask_id=None) is None


async def test_self_assessment_moves_the_card(db: Database) -> None:
    q = a_question()
    await answer(db, q, "no idea really, something about it")
    knew = await answers.self_assess(db, user_id=USER, chat_id=USER, question_id=q.id, grade=3, now=NOW)
    assert knew > NOW + timedelta(hours=12)


# -- revealing --------------------------------------------------------------------------------


async def test_reveal_quotes_my_answer_only_in_private(db: Database) -> None:
    q = a_question()
    await answer(db, q, "my own words about it")
    shown = await revealing.reveal(db, q, chat_id=USER, user_id=USER, private=True)
    assert shown.mine == "my own words about it"
    in_group = await revealing.reveal(db, q, chat_id=GROUP, user_id=USER, private=False)
    assert in_group.mine is None
    assert (await user_data.stored(db, user_id=USER)).reveals == 2


# -- interviews -------------------------------------------------------------------------------


async def test_an_interview_runs_answer_skip_and_report(db: Database) -> None:
    assert interviews.parse_request(CATALOG, ["abc-not-a-topic"]) is None
    assert interviews.parse_request(CATALOG, ["стоп"]) == interviews.Request(stop=True)
    request = interviews.parse_request(CATALOG, ["2", "3m"])
    assert request == interviews.Request(size=2, time_limit=180)
    deps = Deps(db, clock=clock, rng=random.Random(3))
    interview = await interviews.start(deps, BANK, user_id=USER, chat_id=USER, request=request)
    assert interview is not None and interview.size == 2
    assert (await interviews.open_interview(db, user_id=USER, chat_id=USER)) is not None
    q = await interviews.current_question(db, BANK, interview, now=NOW)
    assert q is not None
    ask = await interviews.record_asked(db, interview, q, now=NOW)
    later = Deps(db, KeywordGrader(BANK.lexicon), lambda: NOW + timedelta(minutes=1))
    done = await answers.submit(later, BANK, answers.Attempt(ask, q, USER, USER, None, q.answer, "ru"))
    assert done.interview is not None and done.follow_up == ""
    assert done.interview[0].position == 1  # moved on to the next question
    skipped = await interviews.skip(db, user_id=USER, chat_id=USER, now=NOW)
    assert skipped is not None and skipped.position == 2
    assert await interviews.current_question(db, BANK, skipped, now=NOW) is None
    report = await interviews.finish(db, BANK, skipped, abandoned=False, now=NOW + timedelta(minutes=5))
    assert report is not None and report.summary is not None
    assert [r.skipped for r in report.results] == [False, True]
    assert report.results[0].seconds == 60
    assert await interviews.open_interview(db, user_id=USER, chat_id=USER) is None


async def test_an_interview_abandoned_before_any_answer_has_no_report(db: Database) -> None:
    deps = Deps(db, clock=clock, rng=random.Random(4))
    interview = await interviews.start(deps, BANK, user_id=USER, chat_id=USER, request=interviews.Request(size=1))
    assert interview is not None
    assert await interviews.finish(db, BANK, interview, abandoned=True, now=NOW) is None
    assert await interviews.skip(db, user_id=USER, chat_id=USER, now=NOW) is None


# -- daily settings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("words", "private", "error"),
    [
        (["quiz"], True, "daily.quiz_groups_only"),
        (["разбор", "20:00"], True, "daily.reveal_groups_only"),
        (["reveal", "later"], False, "daily.bad_value"),
        (["25:99"], True, "daily.bad_input"),
        (["9:30", "Mars/Olympus"], True, "daily.bad_input"),
    ],
)
def test_daily_settings_validation(words: list[str], private: bool, error: str) -> None:
    change = daily.parse_command(words, private=private, minute=None)
    assert change.error == error and not change.values
    if error == "daily.bad_input":
        assert change.value and len(change.value) <= 40


def test_daily_settings_values() -> None:
    assert daily.parse_command(["on"], private=True, minute=None).values == {
        "push_enabled": True,
        "push_minute": daily.DEFAULT_MINUTE,
    }
    assert daily.parse_command(["off"], private=True, minute=600).values == {"push_enabled": False}
    assert daily.parse_command(["будни"], private=True, minute=600).values == {"push_weekdays_only": True}
    assert daily.parse_command(["quiz"], private=False, minute=600).values == {"push_kind": "quiz"}
    assert daily.parse_command(["reveal", "off"], private=False, minute=600).values == {"reveal_minute": None}
    change = daily.parse_command(["8:15", "Europe/Berlin"], private=True, minute=None)
    assert change.values == {"push_enabled": True, "push_minute": 8 * 60 + 15, "timezone": "Europe/Berlin"}


async def test_daily_save_schedules_the_next_push_and_keeps_the_users_zone(db: Database) -> None:
    change = daily.parse_command(["8:15", "Europe/Berlin"], private=True, minute=None)
    chat = await daily.save(db, chat_id=USER, user_id=USER, values=change.values, now=NOW, default_zone="UTC")
    assert chat.push_enabled and chat.push_minute == 8 * 60 + 15
    assert chat.next_push_at is not None and chat.next_push_at > NOW
    async with db.read() as session:
        user = await chat_store.get_user(session, USER)
    assert user is not None and user.timezone == "Europe/Berlin"
    stale = daily.button_change("t9999", chat)
    assert stale is None
    off = daily.button_change("off", chat)
    assert off is not None
    chat = await daily.save(db, chat_id=USER, user_id=USER, values=off.values, now=NOW, default_zone="UTC")
    assert not chat.push_enabled


# -- quizzes ----------------------------------------------------------------------------------


async def test_a_quiz_vote_counts_on_the_board_until_the_member_hides(db: Database) -> None:
    assert quizzes.target(CATALOG, "zzzzqqqxxy", chat_filter=None).unknown
    quiz = await quizzes.build(Deps(db, rng=random.Random(5)), CATALOG, chat_id=GROUP, lang="ru", topic=None)
    assert quiz is not None
    await quizzes.record_poll(db, quiz, poll_id="p1", chat_id=GROUP, message_id=3, source="quiz")
    voter = chat_store.UserInfo(8, "Boris")
    assert await quizzes.record_vote(db, poll_id="p1", voter=voter, is_bot=False, option=quiz.correct_option)
    board = await quizzes.board(db, chat_id=GROUP, period="week", zone="Europe/Moscow", now=NOW)
    assert [(r.name, r.quiz_correct) for r in board.rows] == [("Boris", 1)]
    assert board.since is not None and board.since.weekday() == 0
    await quizzes.set_opt_out(db, voter, opted_out=True)
    assert (await quizzes.board(db, chat_id=GROUP, period="all", zone="UTC", now=NOW)).rows == []


# -- user data --------------------------------------------------------------------------------


async def test_progress_export_and_forget(db: Database) -> None:
    assert await user_data.progress(db, BANK, user_id=USER, now=NOW, tz=UTC) is None
    q = a_question()
    await answer(db, q, q.answer)
    await answer(db, q, "in the group", chat_id=GROUP)
    found = await user_data.progress(db, BANK, user_id=USER, now=NOW, tz=UTC)
    assert found is not None and found.progress.answers == 2 and found.due == 0
    exported = await user_data.export(db, user_id=USER)
    assert [a.chat_title for a in exported] == [None, "ML"]
    before = await user_data.stored(db, user_id=USER)
    assert (before.answers, before.group_answers, before.cards, before.profile) == (2, 1, 1, True)
    deleted = await user_data.forget(db, user_id=USER)
    assert (deleted.answers, deleted.cards, deleted.profile, deleted.private_chat) == (2, 1, True, True)
    assert await user_data.stored(db, user_id=USER) == user_data.UserData()
    assert await user_data.export(db, user_id=USER) == []
    async with db.read() as session:  # the group stays
        assert await chat_store.get_chat(session, GROUP) is not None


async def test_review_stats_and_the_mini_app_agree_on_what_is_due(db: Database) -> None:
    """One definition of "due" (issue 32: /review said nothing was due while the Mini App showed
    «Сегодня 7»): due at or before now, and still in the bank. A card due later today is not."""
    from sqlalchemy import update

    from bot.db.models import Card
    from bot.services import webapp_progress
    from bot.services.webapp import Viewer

    questions = [q for q in BANK.questions.values() if q.kind == "question"][:5]
    for q in questions:
        await answer(db, q, "не знаю")
    dues = [NOW - timedelta(days=2), NOW - timedelta(minutes=1), NOW, NOW + timedelta(hours=3), NOW + timedelta(days=2)]
    async with db.write() as session:
        for q, due in zip(questions, dues, strict=True):
            await session.execute(update(Card).where(Card.user_id == USER, Card.question_id == q.id).values(due=due))
        # a card whose question left the bank is never due
        await session.execute(
            update(Card).where(Card.user_id == USER, Card.question_id == questions[0].id).values(question_id="gone-1")
        )
    review = await asking.due_review(db, BANK, user_id=USER, now=NOW)
    stats = await user_data.progress(db, BANK, user_id=USER, now=NOW, tz=UTC)
    app = await webapp_progress.progress(db, CATALOG, Viewer(USER, "ru", "UTC", UTC, True), now=NOW, reuse=False)
    assert stats is not None
    assert review.due == stats.due == app["due"]["now"] == 2
    assert review.question is not None and review.question.id == questions[1].id  # the most overdue left
    assert app["due"]["later_today"] == 1 and app["due"]["week_total"] == 2  # due later: not «now»
    later = await asking.due_review(db, BANK, user_id=USER, now=NOW + timedelta(hours=3))
    assert later.due == 3


def test_user_zone_falls_back_to_the_default() -> None:
    assert user_data.user_zone(None, "Europe/Moscow")[0] == "Europe/Moscow"
    assert user_data.user_zone("Europe/Berlin", "UTC")[0] == "Europe/Berlin"
    assert user_data.user_zone("Nowhere/Gone", "UTC")[0] == "UTC"


# -- the layer's boundary ---------------------------------------------------------------------


def test_services_import_nothing_from_telegram() -> None:
    root = Path(bot.services.__file__).parent
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] != "telegram", f"{path.name} imports {name}"
                assert not name.startswith("bot.tg"), f"{path.name} imports {name}"


# -- chats and topics -------------------------------------------------------------------------


async def test_touch_keeps_the_bots_settings_and_the_topic_filter_sticks(db: Database) -> None:
    topic = BANK.topics[0].id
    await asking.set_topic_filter(db, chat_id=USER, topic_id=topic)
    await user_data.set_language(db, chat_id=USER, user_id=USER, private=True, lang="en")
    await chats.touch(db, chat_store.ChatInfo(USER, "private"), chat_store.UserInfo(USER, "Анна", None, "ru"))
    chat, user = await chats.load(db, chat_id=USER, user_id=USER)
    assert chat is not None and chat.topic_filter == topic
    assert user is not None and user.first_name == "Анна" and user.language == "en"
    assert await user_data.language(db, user_id=USER) == "en"
    assert await chats.load(db, chat_id=12345, user_id=None) == (None, None)
