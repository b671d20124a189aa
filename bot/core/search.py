"""Question search (BM25 over stemmed, transliterated keys) and fuzzy glossary lookup.

Indexed per question: its text (weight 3), the names of its glossary terms and its topic
title (1), and its key points (0.7). Query words match keys exactly or by a prefix of at least
:data:`bot.core.text.PREFIX_MIN` letters, so "чекпоинтов" finds "checkpointing".
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final

from rapidfuzz import fuzz, process, utils

from bot.bank.model import Bank, Term
from bot.core.reading import is_known_russian
from bot.core.text import PREFIX_MIN, keys, normalize, word_key, words

_FIELDS = (("text", 3.0), ("terms", 1.0), ("points", 0.7))
_K1, _B = 1.2, 0.75
PREFIX_FACTOR = 0.8


@dataclass(frozen=True, slots=True)
class Hit:
    question_id: str
    score: float
    # whether the question holds more than half of the query's weight (each word weighs its rarity,
    # a word the bank never uses the most): «квантовая гравитация» finding only «квантованные» is
    # not an answer to the query, and /q says nothing matched
    sure: bool = True


# Words that ask rather than say what about («расскажи про KV cache»): a query is judged by the rest.
_REQUEST: Final = frozenset(
    keys("расскажи расскажите объясни объясните опиши опишите покажи покажите пожалуйста вопрос вопросы про "
         "tell explain describe show please question questions about what is how does do work works")
)  # fmt: skip
# A question's own text matching the query counts this much more than its terms or key points
# mentioning the words: «Расскажи про KV cache» before a coding task that uses a KV cache.
TEXT_BONUS: Final = 0.5
# a task (a coding or practice assignment) ranks a little below a question that matches as well
TASK_FACTOR: Final = 0.85
# ... and a question about the words alone more: «Что такое LoRA? Зачем нужна?» before «К каким слоям
# можем применить LoRA?» (a bonus for the share of the question's own words that the query holds)
FOCUS_BONUS: Final = 0.6
# «Что такое X», «Расскажи про X», "What is X": the question that introduces the subject
_INTRO: Final = re.compile(r"(что так(ое|ая|ой)|расскажи(те)? (про|о)|what (is|are)|tell me about)\b", re.IGNORECASE)
INTRO_FACTOR: Final = 1.15


class SearchIndex:
    """An in-memory BM25 index over a bank; build once per bank load."""

    def __init__(self, bank: Bank) -> None:
        self._ids: list[str] = []
        # per key: the documents (in order) and their term frequencies, in arrays from the start: a
        # dict of Python ints and floats per key peaked at ~60 MB for a 10,000-question bank
        raw: dict[str, tuple[array[int], array[float]]] = {}
        in_text: dict[str, set[int]] = defaultdict(set)  # the documents whose own text holds a key
        lengths: list[float] = []
        self._task = array("b")
        self._surface: dict[str, str] = {}  # a key → a word of a question's text with that key
        self._intro: dict[int, frozenset[str]] = {}  # doc → the first keys after «Что такое», «Расскажи про»
        self._text_len = array("H")  # distinct keys in the question's own text
        for doc, q in enumerate(bank.questions.values()):
            self._ids.append(q.id)
            self._task.append(q.kind == "task")
            if (intro := _INTRO.match(q.text)) is not None:
                self._intro[doc] = frozenset(keys(q.text[intro.end() :])[:3])
            self._text_len.append(min(len(set(keys(q.text))), 65535))
            topic = bank.topic(q.topic)
            term_names = " ".join(" ".join(t.names) for tid in q.terms if (t := bank.term(tid)) is not None)
            fields = {
                "text": q.text,
                "terms": f"{term_names} {topic.title_ru if topic else ''} {topic.title_en if topic else ''}",
                "points": " ".join(kp.text for kp in q.key_points),
            }
            length = 0.0
            tf: dict[str, float] = {}
            for word in words(fields["text"]):
                self._surface.setdefault(word_key(word), word)
            for name, weight in _FIELDS:
                for key in keys(fields[name]):
                    tf[key] = tf.get(key, 0.0) + weight
                    length += weight
                    if name == "text":
                        in_text[key].add(doc)
            for key, count in tf.items():
                entry = raw.get(key)
                if entry is None:
                    entry = raw[key] = (array("I"), array("d"))
                entry[0].append(doc)
                entry[1].append(count)
            lengths.append(length)
        self._pack(raw, in_text, lengths)

    def _pack(self, raw: dict[str, tuple[array[int], array[float]]], in_text: dict[str, set[int]],
              lengths: list[float]) -> None:  # fmt: skip
        """Every key's postings as one slice of two flat arrays: the documents in order and BM25's
        saturated term weight of each, computed once (tf is never needed again); and the documents
        whose own text holds the key as a slice of a third. Two arrays and a frozenset per key took
        13.7 MB for a 10,000-question bank's 14,831 keys, the flat arrays 7.5 MB (the same postings)."""
        avg = (sum(lengths) / len(lengths)) if lengths else 1.0
        # a key → its number n: its postings are [_starts[n], _starts[n + 1]), its own-text documents
        # [_text_starts[n], _text_starts[n + 1])
        self._postings: dict[str, int] = {}
        self._docs, self._weights, self._text_docs = array("I"), array("f"), array("I")
        self._starts, self._text_starts = array("I", [0]), array("I", [0])
        for key in list(raw):
            docs, counts = raw.pop(key)
            self._postings[key] = len(self._postings)
            self._docs.extend(docs)
            self._weights.extend(
                count * (_K1 + 1) / (count + _K1 * (1 - _B + _B * lengths[doc] / avg))
                for doc, count in zip(docs, counts, strict=True)
            )
            self._starts.append(len(self._docs))
            self._text_docs.extend(sorted(in_text.get(key, ())))
            self._text_starts.append(len(self._text_docs))
        self._vocab = sorted(self._postings)

    def _expand(self, key: str) -> list[str]:
        """Index keys that match a query key: itself and, if long enough, keys it prefixes
        or that prefix it (but for an ending: «квантовая» is not «квант…изация»)."""
        if len(key) < PREFIX_MIN:
            return [key] if key in self._postings else []
        found = []
        i = bisect.bisect_left(self._vocab, key)
        while i < len(self._vocab) and self._vocab[i].startswith(key):
            found.append(self._vocab[i])
            i += 1
        for n in range(max(PREFIX_MIN, len(key) - 2), len(key)):
            if key[:n] in self._postings:
                found.append(key[:n])
        return found

    def knows(self, key: str) -> bool:
        return bool(self._expand(key))

    def spelled(self, word: str) -> str:
        """``word`` as the bank spells it when it is mistyped («трансформр» → «трансформер»), else
        as it is. Fused or split words (``kvcahe``) are the glossary's to find: see
        :meth:`bot.catalog.Catalog.find`."""
        found = keys(word)
        if len(found) != 1 or self.knows(found[0]):
            return word
        if _CYRILLIC_ACRONYM.fullmatch(found[0]):  # «кв кэш»: an acronym typed in Cyrillic letters
            latin = "".join(_LATIN.get(c, c) for c in found[0])
            if self.knows(latin):
                return latin.upper()
        if len(found[0]) < 4:
            return word
        close = process.extractOne(found[0], self._vocab, scorer=fuzz.ratio, score_cutoff=80)
        return self._surface.get(close[0], word) if close is not None else word

    def search(self, query: str, limit: int = 50, within: Iterable[str] | None = None) -> list[Hit]:
        query_keys = list(dict.fromkeys(keys(query)))
        if len(query_keys) > 1:
            query_keys = [k for k in query_keys if k not in _REQUEST] or query_keys
        if not query_keys or not self._ids:
            return []
        allowed = None if within is None else set(within)
        n_docs = len(self._ids)
        scores: dict[int, float] = defaultdict(float)
        matched: dict[int, int] = defaultdict(int)
        weight_of: dict[int, float] = defaultdict(float)  # the rarity of the query words a question holds
        total = 0.0
        in_text: dict[int, int] = defaultdict(int)
        introduced: dict[int, int] = defaultdict(int)
        for qk in query_keys:
            hit_docs: dict[int, float] = {}
            text_docs: set[int] = set()
            expanded = self._expand(qk)
            for doc, subject in self._intro.items():
                if not subject.isdisjoint(expanded):
                    introduced[doc] += 1
            for key in expanded:
                factor = 1.0 if key == qk else PREFIX_FACTOR  # the word itself beats a longer/shorter form
                n = self._postings[key]
                start, end = self._starts[n], self._starts[n + 1]
                for doc, weight in zip(self._docs[start:end], self._weights[start:end], strict=True):
                    if weight * factor > hit_docs.get(doc, 0.0):
                        hit_docs[doc] = weight * factor
                text_docs.update(self._text_docs[self._text_starts[n] : self._text_starts[n + 1]])
            idf = math.log(1 + (n_docs - len(hit_docs) + 0.5) / (len(hit_docs) + 0.5))
            total += idf
            for doc, weight in hit_docs.items():
                scores[doc] += idf * weight
                matched[doc] += 1
                weight_of[doc] += idf
            for doc in text_docs:
                in_text[doc] += 1
        n = len(query_keys)

        def final(doc: int, score: float) -> float:
            in_own = in_text[doc]
            score *= (
                matched[doc] / n * (1 + TEXT_BONUS * in_own / n + FOCUS_BONUS * in_own / max(self._text_len[doc], 1))
            )
            if introduced[doc] == n:
                score *= INTRO_FACTOR
            return score * TASK_FACTOR if self._task[doc] else score

        ranked = heapq.nlargest(
            limit,
            ((final(doc, score), doc) for doc, score in scores.items() if allowed is None or self._ids[doc] in allowed),
            key=lambda pair: (pair[0], -pair[1]),
        )
        return [Hit(self._ids[doc], score, weight_of[doc] * 2 > total) for score, doc in ranked]


@dataclass(frozen=True, slots=True)
class TermMatch:
    term: Term
    score: float  # 0..100
    name: str  # the name or alias that matched
    resemblance: float = 100.0  # how much the query resembles that whole name (not just a part of it)


# a short all-Cyrillic query, and how its letters sound in Latin ones: «ппо» is PPO, «рлхф» RLHF
_CYRILLIC_ACRONYM: Final = re.compile(r"[а-я]{2,5}")
_LATIN: Final = dict(
    zip(
        "абвгдезийклмнопрстуфхцыэ",
        ["a", "b", "v", "g", "d", "e", "z", "i", "y", "k", "l", "m", "n", "o", "p", "r", "s", "t", "u", "f", "h", "c",
         "y", "e"],
        strict=True,
    )
)  # fmt: skip


class GlossaryIndex:
    """Fuzzy lookup over term names and aliases (rapidfuzz)."""

    SURE = 88.0
    SUGGEST = 75.0  # below this a name is not offered at all ("qwertyuiop" is not "BERT")
    # Besides the best match, a name is offered only when it resembles the query as a whole: "kv cahce"
    # is "KV cache", not every longer name that contains a KV cache ("paged KV cache").
    RESEMBLES = 70.0

    def __init__(self, bank: Bank) -> None:
        self._names: list[str] = []
        self._terms: list[Term] = []
        for term in bank.terms.values():
            for name in term.names:
                self._names.append(name)
                self._terms.append(term)
        self._normalized = [normalize(n) for n in self._names]
        self._processed = [utils.default_process(n) for n in self._normalized]
        self._exact: dict[str, Term] = {}
        for name, term in zip(self._normalized, self._terms, strict=True):
            self._exact.setdefault(name.strip(), term)

    def lookup(self, text: str, limit: int = 5) -> list[TermMatch]:
        """Best distinct terms for ``text``, best first (an exact name or alias scores 100). An
        acronym typed in Cyrillic letters («ппо», «рлхф», «гпт») is also read letter by letter."""
        query = normalize(text).strip()
        if not query:
            return []
        exact = self._exact.get(query)
        if exact is None and _CYRILLIC_ACRONYM.fullmatch(query) and not is_known_russian(query):
            exact = self._exact.get("".join(_LATIN.get(c, c) for c in query))  # not «кто» as KTO
        best: dict[str, TermMatch] = {}
        if exact is not None:
            best[exact.id] = TermMatch(exact, 100.0, text.strip())
        results = process.extract(
            utils.default_process(query),
            self._processed,
            scorer=fuzz.WRatio,
            processor=None,
            limit=limit * 4,
            score_cutoff=self.SUGGEST,
        )
        processed = utils.default_process(query)
        for _, score, idx in results:
            term = self._terms[idx]
            value = 100.0 if self._normalized[idx] == query else float(score)
            resemblance = fuzz.ratio(processed, self._processed[idx])
            if term.id in best:
                resemblance = max(resemblance, best[term.id].resemblance)
            if term.id not in best or best[term.id].score < value:
                best[term.id] = TermMatch(term, value, self._names[idx], resemblance)
            else:
                best[term.id] = replace(best[term.id], resemblance=resemblance)
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.term.term_en.casefold()))
        return ranked[:limit]

    def offered(self, matches: list[TermMatch]) -> list[TermMatch]:
        """What «Возможно, вы имели в виду» offers: the best match, and others that resemble the
        query as a whole."""
        return matches[:1] + [m for m in matches[1:] if m.score == 100 or m.resemblance >= self.RESEMBLES]

    def is_sure(self, matches: list[TermMatch]) -> bool:
        """Whether the first match is confidently the one meant (else: "did you mean"). A fuzzy match
        must also resemble the query as a whole: «сет» inside a longer alias is only a guess."""
        if not matches or matches[0].score < self.SURE:
            return False
        if matches[0].score < 100 and matches[0].resemblance < self.RESEMBLES:
            return False
        return len(matches) == 1 or matches[0].score - matches[1].score >= 5 or matches[0].score == 100
