"""Key-point feedback on a free-text answer: deterministic, offline.

A key point is *covered* when the answer contains one of its match phrases, compared by keys
(stems + transliteration, see :mod:`bot.core.text`), so "чекпоинтов" covers a point listing
"checkpoint". The score is the share of covered points, discounted for answers that are not
prose: a bare list of terms ("keyword stuffing") or a few words never scores as a full answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.bank import KeyPoint, Question
from bot.core.text import is_stopword, keys, phrase_in, words

_SEGMENTS = re.compile(r"[,;\n•·|/]+|\s-\s")
STUFFING_FACTOR = 0.4
SHORT_WORDS = 8


@dataclass(frozen=True, slots=True)
class Grade:
    covered: tuple[int, ...]  # indexes into question.key_points
    missed: tuple[int, ...]
    coverage: float  # share of key points covered, 0..1
    score: float  # coverage after the prose discount, 0..1
    stuffed: bool  # reads like a list of terms, not an answer
    words: int

    @property
    def verdict(self) -> str:
        """'good' | 'partial' | 'weak' — used to suggest a self-assessment."""
        if self.score >= 0.67:
            return "good"
        return "partial" if self.score >= 0.34 else "weak"


def _covers(point: KeyPoint, answer_keys: list[str]) -> bool:
    # Stop words are kept on both sides: "не хранит" must not match "хранит".
    for phrase in point.match:
        phrase_keys = keys(phrase, drop_stopwords=False)
        if phrase_keys and phrase_in(phrase_keys, answer_keys):
            return True
    return False


def looks_stuffed(text: str) -> bool:
    """A list of terms rather than sentences: almost no function words, or short fragments
    separated by commas/new lines."""
    tokens = words(text)
    if len(tokens) < 4:
        return False
    function_share = sum(1 for w in tokens if is_stopword(w)) / len(tokens)
    segments = [s for s in _SEGMENTS.split(text) if s.strip()]
    avg_segment = len(tokens) / max(1, len(segments))
    return function_share < 0.06 or (avg_segment < 3.0 and function_share < 0.15)


def grade(question: Question, text: str) -> Grade:
    answer_keys = keys(text, drop_stopwords=False)
    covered = tuple(i for i, kp in enumerate(question.key_points) if _covers(kp, answer_keys))
    missed = tuple(i for i in range(len(question.key_points)) if i not in covered)
    total = len(question.key_points) or 1
    coverage = len(covered) / total
    n_words = len(words(text))
    stuffed = looks_stuffed(text)
    score = coverage
    if stuffed:
        score *= STUFFING_FACTOR
    elif n_words < SHORT_WORDS:
        score *= n_words / SHORT_WORDS
    return Grade(covered, missed, round(coverage, 3), round(score, 3), stuffed, n_words)


def hint(point: KeyPoint) -> str:
    """A hint for a missed key point: its opening words, not the whole statement."""
    parts = point.text.split()
    if len(parts) <= 3:
        return f"{parts[0]}…" if len(parts) > 1 else "…"
    keep = max(2, round(len(parts) * 0.4))
    return " ".join(parts[:keep]).rstrip(",.;:—- ") + "…"
