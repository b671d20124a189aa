"""«Это не ошибка»: a user disputes a charge of the offline grader on their answer.

The dispute is recorded (question, charge, claim, the sentence charged) for the rubric's authors
(``interview-bot disputes``); the answer is graded again without the disputed charges, its stored
score changes, the interview item it answered follows, and the FSRS card is rated again when the
answer was the latest and the rating automatic (a self-assessment stands).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from bot.bank import Bank, Question
from bot.core import grading
from bot.core.grading import Grade
from bot.db import answers, cards, disputes
from bot.db import interviews as interview_store
from bot.db.engine import Database
from bot.db.models import Dispute


class Refused(enum.Enum):
    GONE = "gone"  # the answer or its question is no longer there, or the charge is not on it
    NOT_YOURS = "not_yours"  # somebody else's answer (a group)


@dataclass(frozen=True, slots=True)
class Disputed:
    question: Question
    grade: Grade  # the answer graded again without the disputed charges
    before: Grade  # as it was graded before this dispute
    text: str  # the answer
    answer_id: int
    disputed: tuple[str, ...] = ()  # the claims disputed on this answer so far
    again: bool = False  # this charge was disputed before


def charge_text(q: Question, charge: str) -> str:
    """What a charge claims: the misconception's claim, or the key point stated the other way round."""
    kind, index = charge[0], int(charge[1:])
    if kind == "m" and index < len(q.misconceptions):
        return q.misconceptions[index].claim
    if kind == "k" and index < len(q.key_points):
        return q.key_points[index].text
    return ""


def regrade(q: Question, text: str, bank: Bank, waived: frozenset[str]) -> Grade:
    return grading.grade(q, text, bank.lexicon, waived=waived)


async def dispute(
    db: Database, bank: Bank, *, answer_id: int, user_id: int, charge: str, now: datetime
) -> Disputed | Refused:
    async with db.write() as session:
        answer = await disputes.get_answer(session, answer_id)
        q = bank.question(answer.question_id) if answer is not None else None
        if answer is None or q is None:
            return Refused.GONE
        if answer.user_id != user_id:
            return Refused.NOT_YOURS
        waived = await disputes.waived(session, answer_id)
        before = regrade(q, answer.text, bank, waived)
        sentence = _sentence(before, charge)
        if charge in waived:
            claims = tuple(charge_text(q, c) for c in sorted(waived))
            return Disputed(q, before, before, answer.text, answer_id, claims, again=True)
        if sentence is None:
            return Refused.GONE
        await disputes.add(session, answer, charge=charge, claim=charge_text(q, charge), sentence=sentence, now=now)
        after = regrade(q, answer.text, bank, waived | {charge})
        await answers.set_grade(session, answer.id, after.score, after.covered)
        if answer.ask_id is not None:
            await disputes.regrade_interview_item(session, answer.ask_id, after.score)
        latest = await answers.latest_answer(session, answer.user_id, answer.question_id)
        if latest is not None and latest.id == answer.id:
            await cards.review_card(
                session,
                answer.user_id,
                answer.question_id,
                self_grade=None,
                coverage=after.score,
                now=now,
                regrade=True,
            )
    claims = tuple(charge_text(q, c) for c in sorted(waived | {charge}))
    return Disputed(q, after, before, answer.text, answer_id, claims)


def _sentence(grade: Grade, charge: str) -> str | None:
    """The sentence behind a charge of this grade, None if the grade makes no such charge."""
    kind, index = charge[0], int(charge[1:])
    pairs = (
        zip(grade.misconceptions, grade.evidence, strict=False)
        if kind == "m"
        else zip(grade.contradicted, grade.reversal_evidence, strict=False)
    )
    return next((s for i, s in pairs if i == index), None)


async def interview_of(db: Database, answer_id: int) -> int | None:
    """The mock interview a stored answer was given in, if any."""
    async with db.read() as session:
        answer = await disputes.get_answer(session, answer_id)
        if answer is None or answer.ask_id is None:
            return None
        return await interview_store.of_ask(session, answer.ask_id)


async def all_disputes(db: Database) -> list[Dispute]:
    async with db.read() as session:
        return await disputes.all_disputes(session)


async def count(db: Database) -> int:
    async with db.read() as session:
        return await disputes.count(session)
