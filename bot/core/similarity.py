"""Near-identical questions: TF-IDF cosine over lemmas of the question texts.

A question's words are lower-cased, stop words dropped, and each word reduced to the key of its
lemma (pymorphy3's normal form for Russian, then the stem key :func:`bot.core.text.word_key` that
also joins transliterated jargon with its English original: «чекпоинтов» = "checkpoints"). Each
text is a vector of its keys' counts weighted by smoothed IDF over the whole bank
(``log((1 + N) / (1 + df)) + 1``); two texts are near-identical when the cosine of their vectors
is at least :data:`THRESHOLD`. The bank links such items (``same_as`` / ``overlaps``), and a test
keeps every near-identical pair linked. Lemmas are cached per word, so the whole bank costs one
parse per distinct word and one sparse dot product per pair.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Final

from bot.bank.model import Bank
from bot.core.matching import base_keys
from bot.core.text import is_stopword, word_key, words

THRESHOLD: Final = 0.8
_CYR: Final = re.compile(r"[а-я]")


@lru_cache(maxsize=100_000)
def lemma_key(word: str) -> str:
    """One key per word: its lemma's key for Russian (pymorphy3), its stem key otherwise."""
    if _CYR.search(word):
        own = word_key(word)
        others = sorted(k for k in base_keys(word) if k != own)
        return others[0] if others else own
    return word_key(word)


def lemmas(text: str) -> list[str]:
    return [lemma_key(w) for w in words(text) if not is_stopword(w)]


def vectors(texts: dict[str, str]) -> dict[str, dict[str, float]]:
    """Unit TF-IDF vectors of the texts (id → text), keyed like the texts."""
    counts = {key: Counter(lemmas(text)) for key, text in texts.items()}
    df: Counter[str] = Counter()
    for c in counts.values():
        df.update(c.keys())
    n = len(texts)
    out: dict[str, dict[str, float]] = {}
    for key, c in counts.items():
        v = {w: tf * (math.log((1 + n) / (1 + df[w])) + 1) for w, tf in c.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        out[key] = {w: x / norm for w, x in v.items()}
    return out


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(w, 0.0) for w, x in a.items())


def near_duplicates(bank: Bank, threshold: float = THRESHOLD) -> list[tuple[str, str, float]]:
    """Pairs of items whose question texts (with their context line) are near-identical, most
    similar first. Only pairs sharing a key are compared (an inverted index)."""
    texts = {q.id: f"{q.context or ''} {q.text}" for q in bank.questions.values()}
    vecs = vectors(texts)
    index: dict[str, list[str]] = {}
    for qid, v in vecs.items():
        for w in v:
            index.setdefault(w, []).append(qid)
    pairs: set[tuple[str, str]] = set()
    for ids in index.values():
        pairs.update((a, b) for i, a in enumerate(ids) for b in ids[i + 1 :])
    found = [(a, b, s) for a, b in pairs if (s := cosine(vecs[a], vecs[b])) >= threshold]
    return sorted(found, key=lambda x: (-x[2], x[0], x[1]))


def unlinked(bank: Bank, pairs: Iterable[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """The pairs whose items are not linked to each other."""
    return [(a, b, s) for a, b, s in pairs if b not in bank.linked(a)]
