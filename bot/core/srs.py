"""Spaced repetition with FSRS (the ``fsrs`` package): one card per user and question.

Ratings come from the user's self-assessment («Знал» / «Частично» / «Не знал»), sharpened by the
key-point coverage of their answer; an answer without a self-assessment is rated from its coverage
alone, and a later self-assessment replaces that automatic rating instead of counting twice.
Learning steps are hours, not minutes: these are interview questions, not flash cards.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from fsrs import Card, Rating, Scheduler

from bot.core.grading import GOOD, PARTIAL
from bot.i18n import counted

SELF_KNEW, SELF_PARTLY, SELF_DIDNT = 3, 2, 1

_SCHEDULER = Scheduler(
    desired_retention=0.9,
    learning_steps=(timedelta(hours=8),),
    relearning_steps=(timedelta(hours=8),),
    enable_fuzzing=False,
)


def rating_for(self_grade: int | None, coverage: float | None) -> Rating:
    """FSRS rating from a self-assessment (1..3) and/or the grader's score (0..1): the grader's
    verdict lines (good ≥ 0.70, partial ≥ 0.35) decide an automatic rating."""
    if self_grade is None:
        if coverage is None:
            return Rating.Hard
        if coverage >= GOOD:
            return Rating.Good
        return Rating.Hard if coverage >= PARTIAL else Rating.Again
    if self_grade >= SELF_KNEW:
        return Rating.Easy if coverage is not None and coverage >= 0.8 else Rating.Good
    if self_grade == SELF_PARTLY:
        return Rating.Hard
    return Rating.Again


@dataclass(frozen=True, slots=True)
class Reviewed:
    state: str  # JSON of the new card
    due: datetime
    rating: int


def review(state: str | None, rating: Rating, now: datetime) -> Reviewed:
    """Apply one review to a stored card (``None``: a new card)."""
    card = Card.from_dict(json.loads(state)) if state else Card(card_id=0, due=now)
    card, _ = _SCHEDULER.review_card(card, rating, now)
    return Reviewed(json.dumps(card.to_dict()), card.due, int(rating))


def describe_interval(due: datetime, now: datetime, lang: str) -> str:
    """'через 3 дня' / 'in 3 days' style, coarse."""
    seconds = max(0.0, (due - now).total_seconds())
    hours = seconds / 3600
    if lang == "en":
        if hours < 20:
            return f"in {max(1, round(hours))} h"
        return f"in {counted(round(hours / 24), 'days', 'en')}"
    if hours < 20:
        return f"через {max(1, round(hours))} ч"
    return f"через {counted(round(hours / 24), 'days', 'ru')}"


def retrievability(state: str, now: datetime) -> float:
    """FSRS's probability that the card's question is recalled at ``now`` (0 for an unreadable card)."""
    try:
        card = Card.from_dict(json.loads(state))
        return float(_SCHEDULER.get_card_retrievability(card, now))
    except (ValueError, KeyError, TypeError):
        return 0.0


def due_now(cards: Iterable[tuple[str, datetime]], now: datetime, in_bank: Callable[[str], object]) -> list[str]:
    """The one definition of "due", shared by /review, /stats and the Mini App: the questions of the
    cards (question id, due time) whose time has come (due at or before ``now``) and that are still
    in the bank (``in_bank(id)`` is truthy), most overdue first. A card due later today is not due yet."""
    return [qid for qid, due in sorted(cards, key=lambda card: card[1]) if due <= now and in_bank(qid)]
