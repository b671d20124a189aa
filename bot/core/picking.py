"""Choosing the next question for a chat: random within a filter, no repeat until the filtered set
is exhausted.

The chat's history is a mapping question id → times shown. A pick is uniform among the candidates
shown the fewest times; so a filter is exhausted before anything in it repeats, and switching
filters never resets what other filters have left.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence

from bot.bank.model import Bank

_TRIES = 24


def pick(candidates: Sequence[str], seen: Mapping[str, int], rng: random.Random) -> str | None:
    """A uniformly random least-seen candidate, or None if there are no candidates."""
    if not candidates:
        return None
    # Fast path: while some candidates are unseen, rejection sampling usually finds one at once.
    for _ in range(_TRIES):
        choice = candidates[rng.randrange(len(candidates))]
        if seen.get(choice, 0) == 0:
            return choice
    # Slow path, in C-level loops: every candidate's count, then a uniform pick among the least.
    counts = list(map(seen.get, candidates, itertools.repeat(0)))
    least = min(counts)
    pool = list(itertools.compress(candidates, map(least.__eq__, counts)))
    return pool[rng.randrange(len(pool))]


def candidates_for(bank: Bank, topic: str | None, *, include_tasks: bool = False) -> Sequence[str]:
    """Question ids in a topic (or the whole bank), in bank order (precomputed by the bank)."""
    return bank.candidates(topic, include_tasks=include_tasks)
