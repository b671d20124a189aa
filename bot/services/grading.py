"""Grading an answer: the offline rubric grader, or the LLM examiner with the offline one as fallback.

``bot.services.graders.build_grader(settings)`` returns the backend the settings choose. Every grader has ``grade_sync``
(the offline path, used by ``interview-bot grade`` and as the fallback) and ``grade`` (async; the LLM
examiner calls its endpoint there).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from bot.bank import Bank, Lexicon, Question
from bot.core import grading
from bot.core.grading import Grade

log = logging.getLogger(__name__)


async def warm_up(bank: Bank, *, slice_seconds: float = 0.002, pause_seconds: float = 0.008) -> None:
    """Prepare the offline grader for the bank in the background after start-up, so the first
    answers to each question are not the slow ones: slices of ``slice_seconds`` of work, each followed
    by ``pause_seconds`` of idle loop. An update or a Mini App request that arrives meanwhile waits at
    most one slice at each of its awaits (a request makes several), and most find the loop idle; the
    whole warm-up takes five times its CPU time (1-2 s for the shipped bank) in wall time."""
    started = time.process_time()
    # the matcher (~0.2 s) in a thread: the loop gets the interpreter back every few milliseconds
    await asyncio.to_thread(grading.matcher_for, bank.lexicon)
    steps = grading.warm_up(bank.questions.values(), bank.lexicon)
    prepared = 0
    deadline = time.monotonic() + slice_seconds
    for count in steps:
        prepared = count
        if time.monotonic() >= deadline:
            await asyncio.sleep(pause_seconds)  # let the updates waiting meanwhile run
            deadline = time.monotonic() + slice_seconds
    log.info("grader ready: %d phrases prepared (%.1f s CPU)", prepared, time.process_time() - started)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A grade plus how it was obtained: ``fallback`` names why the LLM was not used (or "")."""

    grade: Grade
    fallback: str = ""  # "" | "timeout" | "error" | "rate_limited" | "daily_limit" | "bad_reply"


class KeywordGrader:
    name = "keywords"

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self.lexicon = lexicon

    def grade_sync(self, question: Question, text: str, lexicon: Lexicon | None = None) -> Grade:
        return grading.grade(question, text, lexicon if lexicon is not None else self.lexicon)

    async def grade(
        self, question: Question, text: str, *, lang: str = "ru", user_key: str = "", lexicon: Lexicon | None = None
    ) -> Outcome:
        return Outcome(self.grade_sync(question, text, lexicon))
