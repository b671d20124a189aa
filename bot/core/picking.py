"""Choosing the next question for a chat: random within a filter, no repeat until the filtered set
is exhausted, an item linked to the one just asked only when nothing else can come.

The chat's history is a mapping question id → times shown. A pick is uniform among the candidates
shown the fewest times; so a filter is exhausted before anything in it repeats, and switching
filters never resets what other filters have left. Among those least-shown candidates, the items
linked by ``same_as`` / ``overlaps`` to the previous question (``avoid``, see :func:`not_after`)
are passed over while any other is left, and near a round's end a pick is preferred that leaves
the rest an order with no twins side by side; two near-identical questions come back to back only
when nothing else can (a repeat within the round would be worse).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Collection, Mapping, Sequence

from bot.bank.model import Bank

_TRIES = 24
_LOOKAHEAD = 10  # a least-seen pool this small is checked for an order with no twins side by side


def pick(
    candidates: Sequence[str],
    seen: Mapping[str, int],
    rng: random.Random,
    *,
    avoid: Collection[str] = (),
    linked: Callable[[str], Collection[str]] | None = None,
) -> str | None:
    """A uniformly random least-seen candidate, outside ``avoid`` unless every least-seen one is
    inside it; None if there are no candidates. With ``linked`` (the bank's links), when few
    least-seen candidates are left, one is preferred after which the rest of the round can still
    be asked with no twins back to back (so a pair of twins is not left for last)."""
    if not candidates:
        return None
    # Fast path: while some candidates are unseen, rejection sampling usually finds one at once
    # (with links, only while more than _LOOKAHEAD are surely unseen).
    if linked is None or len(candidates) - len(seen) > _LOOKAHEAD:
        for _ in range(_TRIES):
            choice = candidates[rng.randrange(len(candidates))]
            if seen.get(choice, 0) == 0 and choice not in avoid:
                return choice
    # Slow path, in C-level loops: every candidate's count, then a uniform pick among the least
    # (a twin of the previous question only when the least-seen are all twins).
    counts = list(map(seen.get, candidates, itertools.repeat(0)))
    least = min(counts)
    pool = list(itertools.compress(candidates, map(least.__eq__, counts)))
    preferred = [c for c in pool if c not in avoid] if avoid else pool
    preferred = preferred or pool
    if linked is not None and 2 < len(pool) <= _LOOKAHEAD:
        rest = frozenset(pool)
        memo: dict[tuple[frozenset[str], str], bool] = {}
        preferred = [c for c in preferred if _orderable(rest - {c}, c, linked, memo)] or preferred
    return preferred[rng.randrange(len(preferred))]


def _orderable(
    rest: frozenset[str],
    last: str,
    linked: Callable[[str], Collection[str]],
    memo: dict[tuple[frozenset[str], str], bool],
) -> bool:
    """Whether ``rest`` can follow ``last`` in some order with no item right after one linked to it
    (depth-first over at most 2^9 subsets, memoised)."""
    if not rest:
        return True
    key = (rest, last)
    found = memo.get(key)
    if found is None:
        after = linked(last)
        found = memo[key] = any(x not in after and _orderable(rest - {x}, x, linked, memo) for x in rest)
    return found


def not_after(bank: Bank, previous: str | None) -> frozenset[str]:
    """What must not follow ``previous``: the items linked to it (and itself)."""
    if previous is None:
        return frozenset()
    return frozenset((previous, *bank.linked(previous)))


def candidates_for(bank: Bank, topic: str | None, *, include_tasks: bool = False) -> Sequence[str]:
    """Question ids in a topic (or the whole bank), in bank order (precomputed by the bank)."""
    return bank.candidates(topic, include_tasks=include_tasks)
