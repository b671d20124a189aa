"""Mock interviews: choosing the questions and scoring the session (no telegram imports)."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bot.bank import Bank

DEFAULT_SIZE = 5
MAX_SIZE = 20
_LIMIT_RE = re.compile(r"^(\d{1,3})\s*(s|с|сек|m|м|мин|min)?$", re.IGNORECASE)


def parse_time_limit(token: str) -> int | None:
    """'3m', '90s', '5мин' → seconds (10 s .. 30 min); None if the token is not a time limit."""
    m = _LIMIT_RE.match(token.strip())
    if not m or not m.group(2):
        return None
    value = int(m.group(1))
    seconds = value if m.group(2).lower() in ("s", "с", "сек") else value * 60
    return seconds if 10 <= seconds <= 30 * 60 else None


def choose(
    bank: Bank,
    topics: Sequence[str],
    size: int,
    rng: random.Random,
    answered: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    """``size`` questions across ``topics`` (all topics if empty), mixed difficulty, easier
    first like an interviewer; questions the user has not answered yet are preferred. Never two
    items linked by ``same_as`` / ``overlaps``: an interview asks each question once."""
    pool = [q for q in bank.questions.values() if q.kind == "question" and (not topics or q.topic in topics)]
    if not pool:
        return []
    by_level: dict[int, list[str]] = defaultdict(list)
    for q in pool:
        by_level[q.difficulty].append(q.id)
    for ids in by_level.values():
        rng.shuffle(ids)
        ids.sort(key=lambda qid: qid in answered)  # stable: unanswered first, random within
    chosen: list[str] = []
    blocked: set[str] = set()  # the chosen items and every item linked to one
    levels = sorted(by_level)
    i = 0
    while len(chosen) < size and any(by_level.values()):
        ids = by_level[levels[i % len(levels)]]
        while ids:
            qid = ids.pop(0)
            if qid not in blocked:
                chosen.append(qid)
                blocked.add(qid)
                blocked.update(bank.linked(qid))
                break
        i += 1
    # easy to hard; the sort is stable, so questions of one level keep their random order
    chosen.sort(key=lambda qid: bank.questions[qid].difficulty)
    return chosen


@dataclass(frozen=True, slots=True)
class ItemResult:
    question_id: str
    coverage: float | None
    self_grade: int | None
    seconds: float | None
    skipped: bool

    @property
    def score(self) -> float:
        """0..1: coverage, blended with the self-assessment when there is one."""
        if self.skipped or (self.coverage is None and self.self_grade is None):
            return 0.0
        coverage = self.coverage or 0.0
        if self.self_grade is None:
            return coverage
        return 0.5 * coverage + 0.5 * (self.self_grade - 1) / 2


@dataclass(frozen=True, slots=True)
class Report:
    items: list[ItemResult]
    score: int  # 0..100
    weakest: list[tuple[str, int]]  # (topic id, score 0..100), weakest first


def report(bank: Bank, items: Sequence[ItemResult]) -> Report:
    overall = round(100 * sum(i.score for i in items) / len(items)) if items else 0
    per_topic: dict[str, list[float]] = defaultdict(list)
    for item in items:
        q = bank.question(item.question_id)
        if q is not None:
            per_topic[q.topic].append(item.score)
    topic_scores = sorted(((topic, round(100 * sum(v) / len(v))) for topic, v in per_topic.items()), key=lambda x: x[1])
    weakest = [(topic, score) for topic, score in topic_scores if score < 60][:3]
    return Report(list(items), overall, weakest)
