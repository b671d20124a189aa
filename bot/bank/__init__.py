"""The question bank: format, loader, validator and the immutable in-memory bank.

Nothing in this package imports ``telegram``.
"""

from bot.bank.loader import default_bank_path, load_bank
from bot.bank.model import Bank, FollowUp, KeyPoint, Lexicon, Misconception, Question, QuestionExtras, Term, Topic
from bot.bank.problems import BankError, Problem

__all__ = [
    "Bank",
    "BankError",
    "FollowUp",
    "KeyPoint",
    "Lexicon",
    "Misconception",
    "Problem",
    "Question",
    "QuestionExtras",
    "Term",
    "Topic",
    "default_bank_path",
    "load_bank",
]
