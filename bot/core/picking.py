"""Choosing the next question for a chat: random within a filter, no repeat until the filtered set
is exhausted.

The chat's history is a mapping question id → times shown. A pick is uniform among the candidates
shown the fewest times; so a filter is exhausted before anything in it repeats, and switching
filters never resets what other filters have left.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from bot.bank.model import Bank

_TRIES = 24


def pick(candidates: Sequence[str], seen: Mapping[str, int], rng: random.Random) -> str | None:
    """A uniformly random least-seen candidate, or None if there are no candidates."""
    if not candidates:
        return None
    # Fast path: while most candidates are unseen, rejection sampling finds one in O(1).
    if len(seen) < len(candidates):
        for _ in range(_TRIES):
            choice = candidates[rng.randrange(len(candidates))]
            if seen.get(choice, 0) == 0:
                return choice
    least = min(seen.get(c, 0) for c in candidates)
    pool = [c for c in candidates if seen.get(c, 0) == least]
    return pool[rng.randrange(len(pool))]


def candidates_for(bank: Bank, topic: str | None, *, include_tasks: bool = False) -> list[str]:
    """Question ids in a topic (or the whole bank), in bank order."""
    ids = bank.topic_question_ids(topic) if topic else tuple(bank.questions)
    if include_tasks:
        return list(ids)
    return [qid for qid in ids if bank.questions[qid].kind == "question"]
