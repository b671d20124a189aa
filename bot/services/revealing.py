"""Revealing: a question's reference answer (with the user's own latest answer beside it) and its
glossary terms."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bank import Bank, Question, Term
from bot.db import answers, asks
from bot.db.engine import Database


@dataclass(frozen=True, slots=True)
class Revealed:
    question: Question
    mine: str | None  # the user's latest answer to it (private chats only)


async def reveal(db: Database, q: Question, *, chat_id: int, user_id: int | None, private: bool) -> Revealed:
    """Note that the reference answer was shown in the chat; in a private chat, with the user's
    latest answer to quote above it."""
    mine = None
    async with db.write() as session:  # one unit of work: the latest answer and the reveal
        if private and user_id is not None:
            mine = await answers.latest_text(session, user_id, q.id)
        await asks.add_reveal(session, q.id, chat_id, user_id)
    return Revealed(q, mine)


async def note_reveal(db: Database, q: Question, *, chat_id: int, user_id: int | None) -> None:
    """The reference answer was shown (the terminal shows it after every answer)."""
    async with db.write() as session:
        await asks.add_reveal(session, q.id, chat_id, user_id)


def single_term(bank: Bank, q: Question) -> Term | None:
    """The question's only glossary term (its card is shown directly), or None (a list then)."""
    return bank.term(q.terms[0]) if len(q.terms) == 1 else None
