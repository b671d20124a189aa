"""Mock interviews: start, ask the current question, take its answer (and one follow-up), skip,
abandon, and the report's data.

The session lives in the database (interviews, interview_items), so it survives restarts and can
be resumed or abandoned; one open session per user per chat. The ``Interview`` a caller holds is a
detached copy: the functions here that move it on update its ``position`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from bot.bank import Bank, FollowUp, Question
from bot.bank.model import is_number
from bot.catalog import Catalog
from bot.core import grading
from bot.core import interview as core
from bot.core.grading import Grade
from bot.db import answers, asks
from bot.db import disputes as dispute_store
from bot.db import interviews as interview_store
from bot.db.engine import Database
from bot.db.models import Ask, AskSource, Interview, InterviewItem, InterviewStatus
from bot.services.deps import Deps

STOP_WORDS = frozenset({"stop", "стоп", "end", "закончить", "abandon"})
DEEP_WORDS = frozenset({"deep", "глубоко", "подробно", "вглубь"})
FOLLOW_UP_LIMIT = 400


@dataclass(frozen=True, slots=True)
class Request:
    """What ``/interview 10 lora 2m`` asks for."""

    size: int = core.DEFAULT_SIZE
    topics: tuple[str, ...] = ()
    time_limit: int | None = None  # seconds per question
    stop: bool = False  # «/interview stop»
    deep: bool = False  # «/interview 5 deep»: an interviewer's follow-up after each answer


def parse_request(catalog: Catalog, words: Sequence[str]) -> Request | None:
    """The request in the command's words; None when a word is neither a size, a time limit nor a
    topic (the usage is shown then)."""
    if words and words[0].lower() in STOP_WORDS:
        return Request(stop=True)
    size, topics, limit, deep = core.DEFAULT_SIZE, [], None, False
    for token in words:
        if token.lower() in DEEP_WORDS:
            deep = True
            continue
        if is_number(token):
            size = max(1, min(core.MAX_SIZE, int(token)))
            continue
        seconds = core.parse_time_limit(token)
        if seconds is not None:
            limit = seconds
            continue
        topic = catalog.find_topic(token)
        if topic is None:
            return None
        topics.append(topic.id)
    return Request(size, tuple(topics), limit, deep=deep)


async def open_interview(db: Database, *, user_id: int, chat_id: int) -> Interview | None:
    async with db.read() as session:
        return await interview_store.open_interview(session, user_id, chat_id)


async def start(deps: Deps, bank: Bank, *, user_id: int, chat_id: int, request: Request) -> Interview | None:
    """Choose the questions (unanswered ones first) and open the session; None when none fit."""
    async with deps.db.read() as session:
        answered = await answers.answered_per_question(session, user_id)
    chosen = core.choose(bank, list(request.topics), request.size, deps.rng, answered)
    if not chosen:
        return None
    new = interview_store.NewInterview(
        user_id, chat_id, chosen, request.topics, request.time_limit, started_at=deps.clock(), deep=request.deep
    )
    async with deps.db.write() as session:
        return await interview_store.create_interview(session, new)


async def current_question(db: Database, bank: Bank, interview: Interview, *, now: datetime) -> Question | None:
    """The question at the interview's position; questions gone from the bank are skipped. None:
    no question is left (the caller finishes the interview)."""
    while True:
        async with db.read() as session:
            item = await interview_store.item_at(session, interview.id, interview.position)
        if item is None:
            return None
        q = bank.question(item.question_id)
        if q is not None:
            return q
        async with db.write() as session:  # the bank changed under an open interview
            interview.position = await interview_store.advance(
                session, interview.id, item.position, skipped=True, now=now
            )


async def record_asked(db: Database, interview: Interview, q: Question, *, now: datetime) -> Ask:
    """Record the current question as asked (before it is shown, as ``asking.record_ask``)."""
    async with db.write() as session:
        ask = await asks.record_ask(
            session, interview.chat_id, q.id, user_id=interview.user_id, source=AskSource.INTERVIEW
        )
        await interview_store.item_asked(session, interview.id, interview.position, ask_id=ask.id, now=now)
    return ask


def awaits_follow_up(interview: Interview, item: InterviewItem) -> bool:
    return (
        interview.status == InterviewStatus.OPEN
        and item.position == interview.position
        and item.answered_at is not None
        and item.follow_up is not None
        and item.follow_up_answer is None
    )


def is_current(interview: Interview, item: InterviewItem, user_id: int) -> bool:
    """The item is the open interview's current, unanswered question, and ``user_id`` its taker."""
    return (
        interview.status == InterviewStatus.OPEN
        and item.position == interview.position
        and item.answered_at is None
        and interview.user_id == user_id
    )


async def pending_follow_up(db: Database, *, ask: Ask, user_id: int) -> tuple[Interview, InterviewItem] | None:
    """The interview item whose follow-up question this user's message answers, if any."""
    if ask.source != AskSource.INTERVIEW:
        return None
    async with db.read() as session:
        pending = await interview_store.item_for_ask(session, ask.id)
    if pending is None or pending[0].user_id != user_id or not awaits_follow_up(*pending):
        return None
    return pending


def bank_follow_up(q: Question, position: int) -> FollowUp | None:
    """The follow-up a deep interview asks after question ``position`` (they take turns)."""
    return q.follow_ups[position % len(q.follow_ups)] if q.follow_ups else None


def follow_up_reference(q: Question | None, asked: str | None) -> str:
    """The bank's short answer to a follow-up that was asked, or "" (the LLM examiner's own)."""
    if q is None or not asked:
        return ""
    return next((f.answer for f in q.follow_ups if f.question == asked), "")


async def record_answer(
    db: Database,
    interview: Interview,
    item: InterviewItem,
    grade: Grade,
    *,
    now: datetime,
    question: Question | None = None,
) -> str:
    """The answer to the current question was stored and graded: note it on the item and move on,
    unless a follow-up is asked (returned; one per question, the interview moves on after its
    answer or /skip): the LLM examiner's, or in a deep interview the bank's."""
    follow_up = grade.follow_up.strip()[:FOLLOW_UP_LIMIT] if grade.backend == "llm" else ""
    if not follow_up and interview.deep and question is not None:
        chosen = bank_follow_up(question, item.position)
        follow_up = chosen.question[:FOLLOW_UP_LIMIT] if chosen else ""
    async with db.write() as session:
        await interview_store.item_answered(
            session, interview.id, item.position, coverage=grade.score, follow_up=follow_up or None, now=now
        )
        if not follow_up:
            interview.position = await interview_store.advance(
                session, interview.id, item.position, skipped=False, now=now
            )
    return follow_up


async def answer_follow_up(
    db: Database, interview: Interview, item: InterviewItem, text: str, *, now: datetime
) -> None:
    """The answer to the interviewer's follow-up: kept for the report, then the interview moves on."""
    async with db.write() as session:
        await interview_store.follow_up_answered(session, interview.id, item.position, text)
        interview.position = await interview_store.advance(session, interview.id, item.position, skipped=False, now=now)


async def skip(db: Database, *, user_id: int, chat_id: int, now: datetime) -> Interview | None:
    """Skip the current question (during a follow-up only the follow-up: the answer stands).
    None when there is no open interview with a question to skip."""
    async with db.write() as session:
        interview = await interview_store.open_interview(session, user_id, chat_id)
        item = await interview_store.item_at(session, interview.id, interview.position) if interview else None
        if interview is None or item is None:
            return None
        following = awaits_follow_up(interview, item)
        interview.position = await interview_store.advance(
            session, interview.id, item.position, skipped=not following, now=now
        )
    return interview


@dataclass(frozen=True, slots=True)
class Report:
    """A finished (or abandoned) interview: its answered items with their results, and for each the
    stored answer with the offline grader's charges (``graded``: answer id and grade, or None)."""

    interview: Interview
    items: list[InterviewItem] = field(default_factory=list)  # answered or skipped, in order
    results: list[core.ItemResult] = field(default_factory=list)
    summary: core.Report | None = None
    seconds: float = 0.0  # from the start to ``finish``
    graded: list[tuple[int, Grade] | None] = field(default_factory=list)


async def finish(db: Database, bank: Bank, interview: Interview, *, abandoned: bool, now: datetime) -> Report | None:
    """Close the interview; its report, or None when it was abandoned before any answer."""
    async with db.write() as session:
        status = InterviewStatus.ABANDONED if abandoned else InterviewStatus.FINISHED
        await interview_store.close(session, interview.id, status, now)
        items = await interview_store.items(session, interview.id)
    if abandoned and not any(i.answered_at for i in items):
        return None
    interview.finished_at = now
    return await _report(db, bank, interview, items)


async def report_of(db: Database, bank: Bank, interview_id: int) -> Report | None:
    """The report of a closed interview as it stands now (after a dispute changed a score)."""
    async with db.read() as session:
        interview = await interview_store.get(session, interview_id)
        if interview is None or interview.finished_at is None:
            return None
        items = await interview_store.items(session, interview_id)
    return await _report(db, bank, interview, items)


async def _report(db: Database, bank: Bank, interview: Interview, items: list[InterviewItem]) -> Report:

    done = [i for i in items if i.answered_at is not None]
    results = [
        core.ItemResult(
            i.question_id, i.coverage, i.self_grade,
            (i.answered_at - i.asked_at).total_seconds() if i.answered_at and i.asked_at else None,
            i.skipped,
        )
        for i in done
    ]  # fmt: skip
    graded: list[tuple[int, Grade] | None] = []
    async with db.read() as session:
        for item in done:
            q = bank.question(item.question_id)
            answer = await interview_store.answer_to(session, item.ask_id) if item.ask_id and not item.skipped else None
            if answer is None or q is None:
                graded.append(None)
                continue
            waived = await dispute_store.waived(session, answer.id)
            graded.append((answer.id, grading.grade(q, answer.text, bank.lexicon, waived=waived)))
    end = interview.finished_at or interview.started_at
    seconds = (end - interview.started_at).total_seconds()
    return Report(interview, done, results, core.report(bank, results), seconds, graded)
