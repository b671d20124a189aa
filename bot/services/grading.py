"""Grading an answer: the offline rubric grader, or the LLM examiner with the offline one as fallback.

``build_grader(settings)`` returns the backend the settings choose. Every grader has ``grade_sync``
(the offline path, used by ``interview-bot grade`` and as the fallback) and ``grade`` (async; the LLM
examiner calls its endpoint there).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.bank import Lexicon, Question
from bot.config import Settings
from bot.core import grading
from bot.core.grading import Grade
from bot.db.engine import Database


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


def build_grader(settings: Settings, lexicon: Lexicon | None = None, db: Database | None = None) -> KeywordGrader:
    """The grader the settings choose (``GRADER``); ``db`` holds the LLM cache and daily quota."""
    if settings.grader == "llm":
        settings.require_llm()
        from bot.services.llm import LLMGrader

        return LLMGrader(settings, lexicon, db)
    return KeywordGrader(lexicon)
