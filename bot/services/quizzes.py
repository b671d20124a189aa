"""Quiz polls: which quiz a chat gets next, and recording one that was sent (for /quiz and pushes)."""

from __future__ import annotations

import random

from bot.bank import Bank
from bot.core.quiz import Quiz, make_quiz, quiz_for_term
from bot.db import quiz_repo
from bot.db.engine import Database


async def choose_quiz(
    db: Database,
    bank: Bank,
    chat_id: int,
    lang: str,
    rng: random.Random,
    *,
    topic: str | None,
    term_id: str | None = None,
) -> Quiz | None:
    """A quiz about ``term_id``, or about a term of ``topic`` the chat was quizzed on least.
    ``None`` when none can be built (a topic without glossary terms)."""
    term = bank.term(term_id) if term_id else None
    if term is not None:
        return quiz_for_term(bank, term, rng, lang=lang, topic=topic)
    async with db.read() as session:
        seen = await quiz_repo.quizzed_terms(session, chat_id)
    return make_quiz(bank, rng, lang=lang, topic=topic, seen=seen)


async def record_quiz(
    db: Database, quiz: Quiz, chat_id: int, *, message_id: int | None, poll_id: str, source: str
) -> None:
    """Remember a sent quiz poll, so that its answers can be scored."""
    async with db.write() as session:
        await quiz_repo.record_poll(
            session,
            poll_id=poll_id,
            chat_id=chat_id,
            message_id=message_id,
            term_id=quiz.term_id,
            correct_option=quiz.correct_option,
            source=source,
        )
