"""Progress arithmetic: practice days and streaks, per-topic aggregation, text bars.

Pure functions; the clock ("today") and the user's time zone are passed in.

Per question only the latest signal counts: the coverage of the latest answer that has one, and the
latest self-assessment given (1 не знал, 2 частично, 3 знал). Answers to questions that are no
longer in the bank count toward the totals but toward no topic.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from types import MappingProxyType

GRADES = (3, 2, 1)  # знал, частично, не знал — in display order
FILLED, EMPTY = "▓", "░"
BAR_WIDTH = 10


@dataclass(frozen=True, slots=True)
class AnswerFact:
    """What the statistics need of one stored answer (never its text)."""

    question_id: str
    created_at: datetime  # aware
    coverage: float | None = None
    self_grade: int | None = None


@dataclass(frozen=True, slots=True)
class QuestionSummary:
    question_id: str
    answers: int
    coverage: float | None  # of the latest answer that has one
    self_grade: int | None  # the latest given


@dataclass(frozen=True, slots=True)
class TopicStats:
    topic_id: str
    total: int  # questions in the topic
    answered: int  # of them answered at least once
    coverage: float | None  # mean over answered questions that have a coverage
    grades: Mapping[int, int]  # self-assessment → number of questions

    @property
    def share(self) -> float:
        return self.answered / self.total if self.total else 0.0

    @property
    def mastery(self) -> float:
        """Mean coverage × share answered: 1.0 only when every question is answered fully."""
        return (self.coverage or 0.0) * self.share


@dataclass(frozen=True, slots=True)
class Streak:
    current: int  # consecutive days ending today (or yesterday, if today has no answer yet)
    best: int
    today: bool  # practised today


@dataclass(frozen=True, slots=True)
class Progress:
    topics: tuple[TopicStats, ...]
    answers: int  # answers stored (edits and second answers included)
    questions: int  # distinct questions answered
    total: int  # questions in the bank
    grades: Mapping[int, int]  # over all answered questions
    streak: Streak

    @property
    def graded(self) -> int:
        return sum(self.grades.values())


def summarize(facts: Iterable[AnswerFact]) -> dict[str, QuestionSummary]:
    """Latest coverage and self-assessment per question (ties in time: the later fact wins)."""
    ordered = sorted(enumerate(facts), key=lambda pair: (pair[1].created_at, pair[0]))
    counts: dict[str, int] = {}
    coverage: dict[str, float] = {}
    grade: dict[str, int] = {}
    for _, fact in ordered:
        counts[fact.question_id] = counts.get(fact.question_id, 0) + 1
        if fact.coverage is not None:
            coverage[fact.question_id] = min(max(fact.coverage, 0.0), 1.0)
        if fact.self_grade in GRADES:
            grade[fact.question_id] = fact.self_grade
    return {qid: QuestionSummary(qid, n, coverage.get(qid), grade.get(qid)) for qid, n in counts.items()}


def grade_counts(grades: Iterable[int | None]) -> Mapping[int, int]:
    out = dict.fromkeys(GRADES, 0)
    for g in grades:
        if g in out:
            out[g] += 1
    return MappingProxyType(out)


def topic_stats(topic_id: str, ids: Sequence[str], done: Mapping[str, QuestionSummary]) -> TopicStats:
    answered = [done[qid] for qid in ids if qid in done]
    covered = [s.coverage for s in answered if s.coverage is not None]
    return TopicStats(
        topic_id=topic_id,
        total=len(ids),
        answered=len(answered),
        coverage=sum(covered) / len(covered) if covered else None,
        grades=grade_counts(s.self_grade for s in answered),
    )


def practice_days(instants: Iterable[datetime], tz: tzinfo) -> set[date]:
    """The local dates (in ``tz``) on which something was stored."""
    return {instant.astimezone(tz).date() for instant in instants}


def streak(days: Iterable[date], today: date) -> Streak:
    """Consecutive practice days. A streak is alive while yesterday counts: not having answered
    *yet* today does not break it. Days after ``today`` (clock skew) are ignored."""
    ordered = sorted({d for d in days if d <= today})
    best = run = 0
    previous: date | None = None
    for day in ordered:
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = day
    alive = previous is not None and today - previous <= timedelta(days=1)
    return Streak(current=run if alive else 0, best=best, today=previous == today)


def aggregate(
    topics: Sequence[tuple[str, Sequence[str]]],
    facts: Sequence[AnswerFact],
    *,
    today: date,
    tz: tzinfo,
) -> Progress:
    """Everything /stats shows. ``topics``: (topic id, its question ids) in bank order; ``today``
    is the user's local date."""
    done = summarize(facts)
    total = sum(len(ids) for _, ids in topics)
    return Progress(
        topics=tuple(topic_stats(tid, ids, done) for tid, ids in topics),
        answers=len(facts),
        questions=len(done),
        total=total,
        grades=grade_counts(s.self_grade for s in done.values()),
        streak=streak(practice_days((f.created_at for f in facts), tz), today),
    )


def percent(fraction: float) -> int:
    """Rounded half up, but never 0% for something nor 100% for less than everything."""
    fraction = min(max(fraction, 0.0), 1.0)
    pct = int(fraction * 100 + 0.5)
    if fraction > 0 and pct == 0:
        return 1
    if fraction < 1 and pct == 100:
        return 99
    return pct


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """'▓▓▓▓▓░░░░░  50%': a non-zero share always shows one cell, an incomplete one leaves one empty."""
    fraction = min(max(fraction, 0.0), 1.0)
    filled = int(fraction * width + 0.5)
    if fraction > 0:
        filled = max(filled, 1)
    if fraction < 1:
        filled = min(filled, width - 1)
    return f"{FILLED * filled}{EMPTY * (width - filled)} {percent(fraction):3d}%"
