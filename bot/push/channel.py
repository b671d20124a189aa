"""What the push sender and broadcasts need from a messenger: the interface the Telegram adapter
(:mod:`bot.tg.push_channel`) implements, so :mod:`bot.push` never imports :mod:`bot.tg`."""

from __future__ import annotations

from typing import Protocol

from bot.bank import Bank, Question
from bot.core.quiz import Quiz
from bot.push.outcome import Outcome


class PushChannel(Protocol):
    async def send_question(self, chat_id: int, question: Question, bank: Bank, lang: str, *, group: bool) -> Outcome:
        """The daily question card (with the daily note and the question's buttons)."""
        ...

    async def send_quiz(self, chat_id: int, quiz: Quiz) -> Outcome:
        """A quiz poll; a sent outcome carries the poll's id."""
        ...

    async def send_reveal(
        self, chat_id: int, question: Question, bank: Bank, lang: str, *, answered: int, reply_to: int
    ) -> Outcome:
        """The evening reveal of a group's question, in reply to it (one or more messages; the
        outcome of the first that was not sent, else of the last)."""
        ...

    async def send_text(self, chat_id: int, text: str) -> Outcome:
        """A plain text message (broadcasts)."""
        ...
