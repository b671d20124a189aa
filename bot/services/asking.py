"""Choosing a question and asking it: one code path for the chat, the daily push and the terminal.

Choosing is pure reading (the least-seen question of a topic, a question by number, id, topic or
words, the next search result, the most overdue review card); asking records the question as the
chat's pending one *before* it is shown, so a question a user sees is always one the bot knows
about. ``cancel_ask`` undoes that when sending failed; ``note_message`` keeps the message id the
answer will reply to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.bank import Bank, Question
from bot.bank.model import is_number
from bot.catalog import Catalog
from bot.core import srs
from bot.core.picking import candidates_for, not_after, pick
from bot.db import answers, asks, cards
from bot.db import chat_store as chats
from bot.db.engine import Database
from bot.db.models import Ask, AskSource
from bot.services.deps import Deps

SEARCH_LIMIT = 80


@dataclass(frozen=True, slots=True)
class Choice:
    """The question to ask next, or the topic that has none (``question`` is None then)."""

    question: Question | None
    source: str
    next_topic: str | None = None  # a topic asked for explicitly: «Следующий» stays in it
    new_round: bool = False  # every candidate was shown equally often: a new round begins
    empty_topic: str | None = None  # the topic without questions


async def choose_next(
    deps: Deps,
    bank: Bank,
    *,
    chat_id: int,
    topic: str | None,
    chat_filter: str | None,
    source: str = AskSource.Q,
) -> Choice:
    """A random least-seen question from ``topic`` (default: the chat's filter)."""
    chosen = topic if topic and topic != chat_filter else None  # «Следующий» keeps a topic asked for
    topic = topic or (chat_filter if bank.topic(chat_filter or "") else None)
    ids = candidates_for(bank, topic)
    if not ids and topic is not None:  # a topic of practice tasks only gives its tasks
        ids = candidates_for(bank, topic, include_tasks=True)
    if not ids:
        return Choice(None, source, empty_topic=topic or "")
    async with deps.db.read() as session:
        seen = await chats.seen_counts(session, chat_id)
        previous = await chats.last_question(session, chat_id) if bank.links else None
    qid = pick(ids, seen, deps.rng, avoid=not_after(bank, previous), linked=bank.linked)
    assert qid is not None
    new_round = False
    if len(seen) >= len(ids):  # a new round starts when every candidate was shown equally often
        counts = {seen.get(i, 0) for i in ids}
        new_round = len(counts) == 1 and 0 not in counts
    return Choice(bank.questions[qid], AskSource.TOPIC if chosen else source, chosen, new_round)


@dataclass(frozen=True, slots=True)
class Resolved:
    """What ``/q <text>`` refers to."""

    kind: Literal["question", "topic", "not_found", "nothing"]
    question: Question | None = None
    source: str = ""
    topic: str | None = None
    ref: str = ""


def resolve(catalog: Catalog, text: str) -> Resolved:
    """A question by number (#463, t13), by id, a topic by name, else the best search match."""
    ref = text.lstrip("#№").strip()
    if is_number(ref) or (ref[:1].lower() in "tq" and is_number(ref[1:])):
        q = catalog.bank.resolve(ref)
        return Resolved("question", q, AskSource.NUMBER) if q is not None else Resolved("not_found", ref=ref)
    direct = catalog.bank.resolve(ref) if ref and " " not in ref else None  # an id or a handle: lora-04, lora-4
    if direct is not None:
        return Resolved("question", direct, AskSource.ID)
    topic = catalog.find_topic(text)
    if topic is not None:
        return Resolved("topic", topic=topic.id)
    best = catalog.best_match(text)
    return Resolved("question", best, AskSource.MATCH) if best is not None else Resolved("nothing")


def search_result(catalog: Catalog, query: str, index: int) -> Question | None:
    """The ``index``-th result of a search (None when the results are exhausted)."""
    ids = [h.question_id for h in catalog.find(query, limit=SEARCH_LIMIT).hits]
    return catalog.bank.question(ids[index]) if 0 <= index < len(ids) else None


@dataclass(frozen=True, slots=True)
class Page:
    questions: list[Question]
    next_offset: int | None  # None: the last page


def search_page(catalog: Catalog, text: str, *, offset: int, size: int, limit: int = 100) -> Page:
    """A page of the questions matching ``text`` (every question without text), as inline mode
    pages them."""
    bank = catalog.bank
    ids = [h.question_id for h in catalog.find(text, limit=limit).hits] if text else list(bank.questions)
    page = [q for qid in ids[offset : offset + size] if (q := bank.question(qid)) is not None]
    return Page(page, offset + size if offset + size < len(ids) else None)


@dataclass(frozen=True, slots=True)
class Review:
    """The most overdue question of a user, how many are due, or when the next one comes due."""

    question: Question | None
    due: int
    upcoming: datetime | None = None  # with no question: the next due time (None: no cards at all)


async def due_review(db: Database, bank: Bank, *, user_id: int, now: datetime) -> Review:
    async with db.read() as session:
        due = srs.due_now(await cards.due_questions(session, user_id, now), now, bank.question)
        upcoming = None if due else await cards.next_due(session, user_id)
    if not due:
        return Review(None, 0, upcoming)
    return Review(bank.questions[due[0]], len(due))


async def record_ask(db: Database, *, chat_id: int, question_id: str, user_id: int | None, source: str) -> Ask:
    """Record a question as asked: the chat's pending question from now on."""
    async with db.write() as session:
        return await asks.record_ask(session, chat_id, question_id, user_id=user_id, source=source)


async def cancel_ask(db: Database, ask: Ask, *, previous_pending: int | None) -> None:
    """The question could not be shown: forget it, the previous pending question is pending again."""
    async with db.write() as session:
        await asks.forget_ask(session, ask.id, ask.chat_id, previous_pending)


async def note_message(db: Database, ask: Ask, message_id: int) -> None:
    """The message that shows the question (answers reply to it)."""
    async with db.write() as session:
        await asks.set_ask_message(session, ask.id, message_id)


async def pick_and_record(
    deps: Deps,
    bank: Bank,
    *,
    chat_id: int,
    user_id: int | None,
    candidates: Sequence[str],
    exclude: set[str],
    source: str,
) -> tuple[str, Ask] | None:
    """Choose a least-seen candidate not in ``exclude`` (the session's questions) and record it as
    asked, in one transaction (the terminal loop). An item linked to one already asked in the
    session, or to the chat's previous question, comes only when nothing else is left. None when no
    candidate is left."""
    async with deps.db.write() as session:
        seen = await chats.seen_counts(session, chat_id)
        previous = await chats.last_question(session, chat_id) if bank.links else None
        allowed = [c for c in candidates if c not in exclude]
        avoid = set(not_after(bank, previous)).union(*(bank.linked(qid) for qid in exclude))
        qid = pick(allowed, seen, deps.rng, avoid=avoid, linked=bank.linked)
        if qid is None:
            return None
        ask = await asks.record_ask(session, chat_id, qid, user_id=user_id, source=source)
        return qid, ask


async def answered_questions(db: Database, *, user_id: int) -> set[str]:
    """Ids of the questions the user has answered (the topic list shows progress with them)."""
    async with db.read() as session:
        return await answers.answered_per_question(session, user_id)


async def set_topic_filter(db: Database, *, chat_id: int, topic_id: str | None) -> None:
    """The chat's topic: /q and the daily question ask from it (None: from all topics)."""
    async with db.write() as session:
        await chats.set_chat_fields(session, chat_id, topic_filter=topic_id)
