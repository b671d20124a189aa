"""Quizzes: the data parts of glossary quiz polls and the group leaderboard.

What to quiz (a term, a topic, or the chat's filter), building a quiz from the least-quizzed terms,
recording the poll once it is sent and the members' answers to it, and the board with its opt-out.
Sending the poll is the adapter's part.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from bot.catalog import Catalog
from bot.core.quiz import Quiz, make_quiz, quiz_for_term
from bot.core.schedule import get_tz
from bot.db import chat_store as chats
from bot.db import polls
from bot.db.engine import Database
from bot.db.polls import BoardRow
from bot.services.deps import Deps

log = logging.getLogger(__name__)

PERIODS = ("week", "all")
# a poll answer may race the write that records its poll: wait this long for the poll row
POLL_WAITS = (0.2, 0.5, 1.0)


@dataclass(frozen=True, slots=True)
class Target:
    """What ``/quiz <text>`` asks about: a topic, a glossary term, or nothing known (``unknown``)."""

    topic: str | None = None
    term_id: str | None = None
    unknown: bool = False


def target(catalog: Catalog, text: str, *, chat_filter: str | None) -> Target:
    """A topic by name, else a glossary term found for sure; without text, the chat's filter."""
    if not text:
        return Target(topic=chat_filter if chat_filter and catalog.bank.topic(chat_filter) else None)
    found = catalog.find_topic(text)
    if found is not None:
        return Target(topic=found.id)
    matches = catalog.glossary.lookup(text)
    if not matches or not catalog.glossary.is_sure(matches):
        return Target(unknown=True)
    return Target(term_id=matches[0].term.id)


async def build(
    deps: Deps,
    catalog: Catalog,
    *,
    chat_id: int,
    lang: str,
    topic: str | None,
    term_id: str | None = None,
) -> Quiz | None:
    """A quiz about ``term_id``, or on a term of ``topic`` least quizzed in the chat; None when
    none can be built (a topic without glossary terms)."""
    bank = catalog.bank
    term = bank.term(term_id) if term_id else None
    if term is not None:
        return quiz_for_term(bank, term, deps.rng, lang=lang, topic=topic)
    async with deps.db.read() as session:
        seen = await polls.quizzed_terms(session, chat_id)
    return make_quiz(bank, deps.rng, lang=lang, topic=topic, seen=seen)


async def record_poll(
    db: Database, quiz: Quiz, *, poll_id: str, chat_id: int, message_id: int | None, source: str
) -> None:
    """The poll was sent: its answers count from now on."""
    async with db.write() as session:
        await polls.record_poll(
            session, poll_id=poll_id, chat_id=chat_id, message_id=message_id, term_id=quiz.term_id,
            correct_option=quiz.correct_option, source=source,
        )  # fmt: skip


async def record_vote(db: Database, *, poll_id: str, voter: chats.UserInfo, is_bot: bool, option: int | None) -> bool:
    """A member's answer to one of our polls (``option`` None: retracted), with the voter stored
    for the board's names. The poll row may still be being written: waits a little for it. False
    when the poll is unknown."""
    for wait in (*POLL_WAITS, None):
        async with db.write() as session:
            poll = await polls.get_poll(session, poll_id)
            if poll is not None:
                if not is_bot:
                    await chats.upsert_user(session, voter)
                await polls.record_poll_answer(session, poll, voter.id, option)
                return True
        if wait is None:
            break
        await asyncio.sleep(wait)
    log.info("answer to an unknown poll %s ignored", poll_id)
    return False


def week_start(now: datetime, zone: str) -> datetime:
    """Monday 00:00 of ``now``'s week in ``zone``, as a UTC instant."""
    tz = get_tz(zone)
    local = now.astimezone(tz).date()
    monday = local - timedelta(days=local.weekday())
    return datetime.combine(monday, time(0), tzinfo=tz).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Board:
    rows: list[BoardRow]
    period: str  # "week" | "all"
    since: date | None  # the week's Monday in the chat's zone


async def board(db: Database, *, chat_id: int, period: str, zone: str, now: datetime) -> Board:
    """The group's top members this week (Monday 00:00 in ``zone``) or of all time."""
    since = week_start(now, zone) if period == "week" else None
    async with db.read() as session:
        rows = await polls.leaderboard(session, chat_id, since=since)
    return Board(rows, period, since.astimezone(get_tz(zone)).date() if since else None)


async def set_opt_out(db: Database, user: chats.UserInfo, *, opted_out: bool) -> None:
    """Hide the member from every board (or show them again)."""
    async with db.write() as session:
        await chats.upsert_user(session, user)
        await chats.set_board_opt_out(session, user.id, opted_out)
