"""What the use cases share: the database, the grader, the clock and the random source, built once.

Each entry point builds one :class:`Deps` at start-up — the bot's composition root
(``bot/tg/app.py``, which the demo runs too) and the terminal practice — and passes it to the use
cases that need more than the database; a use case that needs only the database takes the
:class:`~bot.db.engine.Database` itself. The bank is not here: ``/reload`` swaps it while the bot
runs, so a caller reads the current one once and passes it (with the question it took from it).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.db.engine import Database
from bot.services.grading import KeywordGrader


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Deps:
    db: Database
    grader: KeywordGrader = field(default_factory=KeywordGrader)
    clock: Callable[[], datetime] = utcnow  # tests pass a clock of their own
    rng: random.Random = field(default_factory=random.Random)
