"""The grader the settings choose: the offline rubric grader, or the LLM examiner over it.

Its own module so that ``services.grading`` (the offline grader, which the LLM examiner builds on)
never imports ``services.llm``; the LLM module is imported only when it is switched on.
"""

from __future__ import annotations

from bot.bank import Lexicon
from bot.config import Settings
from bot.db.engine import Database
from bot.services.grading import KeywordGrader


def build_grader(settings: Settings, lexicon: Lexicon | None = None, db: Database | None = None) -> KeywordGrader:
    """The grader the settings choose (``GRADER``); ``db`` holds the LLM cache and daily quota."""
    if settings.grader == "llm":
        settings.require_llm()
        from bot.services.llm import LLMGrader

        return LLMGrader(settings, lexicon, db)
    return KeywordGrader(lexicon)
