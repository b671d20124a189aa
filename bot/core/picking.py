"""Choosing the next question for a chat: random within a filter, no repeat until the filtered set
is exhausted, never an item linked to the one just asked.

The chat's history is a mapping question id → times shown. A pick is uniform among the candidates
shown the fewest times; so a filter is exhausted before anything in it repeats, and switching
filters never resets what other filters have left. The items linked by ``same_as`` / ``overlaps``
to the previous question (``avoid``, see :func:`not_after`) are passed over while any other
candidate is left, so two near-identical questions never come back to back.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Collection, Mapping, Sequence

from bot.bank.model import Bank

_TRIES = 24


def pick(
    candidates: Sequence[str], seen: Mapping[str, int], rng: random.Random, *, avoid: Collection[str] = ()
) -> str | None:
    """A uniformly random least-seen candidate outside ``avoid`` (inside it only when nothing else
    is left), or None if there are no candidates."""
    if not candidates:
        return None
    # Fast path: while some candidates are unseen, rejection sampling usually finds one at once.
    for _ in range(_TRIES):
        choice = candidates[rng.randrange(len(candidates))]
        if seen.get(choice, 0) == 0 and choice not in avoid:
            return choice
    # Slow path, in C-level loops: every candidate's count, then a uniform pick among the least.
    allowed = candidates
    if avoid:
        allowed = [c for c in candidates if c not in avoid] or candidates
    counts = list(map(seen.get, allowed, itertools.repeat(0)))
    least = min(counts)
    pool = list(itertools.compress(allowed, map(least.__eq__, counts)))
    return pool[rng.randrange(len(pool))]


def not_after(bank: Bank, previous: str | None) -> frozenset[str]:
    """What must not follow ``previous``: the items linked to it (and itself)."""
    if previous is None:
        return frozenset()
    return frozenset((previous, *bank.linked(previous)))


def candidates_for(bank: Bank, topic: str | None, *, include_tasks: bool = False) -> Sequence[str]:
    """Question ids in a topic (or the whole bank), in bank order (precomputed by the bank)."""
    return bank.candidates(topic, include_tasks=include_tasks)
