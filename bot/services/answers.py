"""Storing an answer and what follows from its grade: one code path for the chat and the terminal.

``record_answer`` stores the answer (with its grade when it is known) and, with a grade, reviews the
user's FSRS card, in one transaction; ``apply_grade`` attaches a grade that arrived later (the LLM
examiner) to an answer stored before it, and reviews the card then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import update

from bot.core.grading import Grade
from bot.db import practice_repo, repo
from bot.db.engine import Database
from bot.db.models import Answer, Ask, Interview, InterviewItem


@dataclass(frozen=True, slots=True)
class Recorded:
    answer: Answer
    again: bool  # the user had already answered this ask
    interview: tuple[Interview, InterviewItem] | None  # the mock interview the ask belongs to


async def record_answer(
    db: Database,
    *,
    ask: Ask,
    question_id: str,
    user_id: int,
    chat_id: int,
    message_id: int | None,
    text: str,
    grade: Grade | None,
    now: datetime,
) -> Recorded:
    async with db.write() as session:
        if message_id is not None:  # the same message handled again (after a crash): stored once
            stored = await repo.answer_to_message(session, chat_id, message_id)
            if stored is not None:
                return Recorded(stored, False, await practice_repo.item_for_ask(session, ask.id))
        previous = await repo.latest_answer(session, user_id, question_id)
        again = previous is not None and previous.ask_id == ask.id
        answer = await repo.add_answer(
            session, ask=ask, question_id=question_id, user_id=user_id, chat_id=chat_id, message_id=message_id,
            text=text, coverage=grade.score if grade else None, covered=grade.covered if grade else (),
        )  # fmt: skip
        if grade is not None:
            await practice_repo.review_card(
                session, user_id, question_id, self_grade=None, coverage=grade.score, now=now
            )
        interview = await practice_repo.item_for_ask(session, ask.id)
    return Recorded(answer, again, interview)


async def apply_grade(db: Database, *, answer: Answer, grade: Grade, now: datetime) -> None:
    async with db.write() as session:
        await session.execute(
            update(Answer)
            .where(Answer.id == answer.id)
            .values(coverage=grade.score, covered=",".join(str(i) for i in grade.covered))
        )
        await practice_repo.review_card(
            session, answer.user_id, answer.question_id, self_grade=None, coverage=grade.score, now=now
        )
    answer.coverage = grade.score
