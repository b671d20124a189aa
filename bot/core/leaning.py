"""Sentences that lean towards a question's known wrong beliefs: a per-question word model (issue 28).

The grader's phrases (:mod:`bot.core.matching`) charge a misconception said in one of the wordings the
rubric lists. A listed error said in other words — another verb, English, a pronoun for the subject —
often still shows in its *words*: an answer that has the inference server run the tool call uses words
the question's wrong texts use and its correct texts do not. For each question every word key gets a
weight

    w(k) = ln((W_k / N_W + A) / (C_k / N_C + A))

where W_k counts the sentences using k among the question's wrong texts (its misconceptions' claims
and predicate phrases, and the wrong answers written for it: :data:`EVIDENCE`), C_k among its correct
texts (the reference answer, key points, details, follow-up answers, and the correct answers written
for it), N_W and N_C the sentences. A sentence's *lean* is the sum of its words' positive weights plus
:data:`NEGATIVE_SHARE` of their negative ones; only the words the answer asserts count (not those in a
negated, refuted, compared, conditional, asked or quoted part: :class:`~bot.core.frames.Frame`).

A sentence whose lean reaches :data:`CHARGE_AT` is charged with the misconception whose own words it
shares most (:func:`lean_charges`); from :data:`ASK_AT` it is asked about, not charged. A charge names
the error and shows its correction, so a sentence whose lean comes mostly from other words (less than
:data:`ATTRIBUTED` of it from the misconception's claim, predicate and subject words) is neither.
The thresholds were chosen on the dev answer sets (tests/fixtures/README.md) for at most ~0.5% of
correct answers charged by this model alone.

The counts are data: ``data/evidence/answers.jsonl``, one line per question, made by
``interview-bot grade-evidence`` from the dev answer sets only (never a test set) and the bank's texts
as they were then. A question whose texts were edited since has its own texts counted again when it is
first graded (~30 ms), so an edited rubric counts at once, and a bank of one's own gets the model from
its rubric alone.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bot.core.frames import Frame
from bot.core.text import is_stopword, normalize

if TYPE_CHECKING:
    from bot.bank import Lexicon, Question
    from bot.core.matching import Matcher, Text

A: Final = 0.01  # smoothing: a word seen once among ~40 wrong sentences and never among the correct weighs ~1.3
NEGATIVE_SHARE: Final = 0.5  # a word of the correct texts pulls a sentence back by half its weight
CHARGE_AT: Final = 7.0
ASK_AT: Final = 5.0
ATTRIBUTED: Final = 0.45  # share of a sentence's lean that must come from the misconception's own words
MIN_KEY: Final = 3  # shorter keys (and function words) carry no lean
MIN_WEIGHT: Final = 0.1  # lighter weights are not kept

EVIDENCE: Final = "evidence/answers.jsonl"  # in the bundled bank's folder (data/ in a checkout)


@dataclass(frozen=True, slots=True)
class Lean:
    """A sentence that leans towards misconception ``index`` (``certain``: charged, else asked)."""

    index: int
    sentence: int  # into the answer's sentences
    lean: float
    certain: bool


def sentence_keys(text: Text, si: int, names: dict[str, str]) -> frozenset[str]:
    """The keys of sentence ``si`` the answer asserts (asserted frame, not negated), synonym groups
    named by ``names`` (:func:`group_names`) so that counts survive a reordered lexicon."""
    out: set[str] = set()
    for tok in text.sentences[si]:
        if tok.neg or tok.frame is not Frame.ASSERTED:
            continue
        for k in tok.keys:
            if k.startswith("~"):
                name = names.get(k)
                if name is not None:
                    out.add(name)
            elif len(k) >= MIN_KEY and not is_stopword(k):
                out.add(k)
    return frozenset(out)


@lru_cache(maxsize=4)
def group_names(lexicon: Lexicon | None) -> dict[str, str]:
    """``~s<i>~`` (the matcher's synonym-group key) → ``~<first member>~``."""
    if lexicon is None:
        return {}
    return {f"~s{gi}~": f"~{normalize(group[0]).strip()}~" for gi, group in enumerate(lexicon.synonyms)}


def count_texts(texts: Iterable[str], matcher: Matcher, names: dict[str, str]) -> tuple[Counter[str], int]:
    """Per key, the sentences of ``texts`` using it; and the number of sentences."""
    counter: Counter[str] = Counter()
    n = 0
    for t in texts:
        read = matcher.tokens(t)
        for si in range(len(read.sentences)):
            counter.update(sentence_keys(read, si, names))
            n += 1
    return counter, n


def wrong_texts(question: Question) -> Iterator[str]:
    for m in question.misconceptions:
        yield m.claim
        yield from m.match


def right_texts(question: Question) -> Iterator[str]:
    yield question.answer
    yield from (k.text for k in question.key_points)
    if question.details:
        yield question.details
    yield from (f.answer for f in question.follow_ups)


class Evidence:
    """The counts file (:data:`EVIDENCE`): per question, the counts of the written answers and of the
    bank's own texts as they were when the file was made. Only each line's place is kept in memory;
    a line is read when its question is first graded."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._places: dict[str, tuple[int, int]] | None = None
        self._lock = threading.Lock()

    def line(self, question_id: str) -> dict[str, Any] | None:
        with self._lock:
            if self._places is None:
                self._places = self._index()
            place = self._places.get(question_id)
            if place is None or self._path is None:
                return None
            try:
                with self._path.open("rb") as f:
                    f.seek(place[0])
                    raw = f.read(place[1])
            except OSError:
                return None
        obj: dict[str, Any] = json.loads(raw)
        return obj

    def _index(self) -> dict[str, tuple[int, int]]:
        if self._path is None:
            from bot.bank.loader import default_bank_path

            self._path = default_bank_path() / EVIDENCE
        places: dict[str, tuple[int, int]] = {}
        try:
            with self._path.open("rb") as f:
                offset = 0
                for raw in f:
                    if raw.strip():
                        head = _QUESTION.search(raw[:200])
                        if head is not None:
                            places[head.group(1).decode()] = (offset, len(raw))
                    offset += len(raw)
        except OSError:
            return {}
        return places


_QUESTION: Final = re.compile(rb'"question": "([^"]+)"')


def text_stamp(question_text: str) -> int:
    """What an evidence line records of its question's text (answers were written to that text)."""
    return zlib.crc32(normalize(question_text).encode())


def bank_stamp(question: Question) -> int:
    """What an evidence line records of the texts it counted from the bank (an edit makes it stale)."""
    parts = [*wrong_texts(question), "\x00", *right_texts(question), "\x00"]
    parts += [s for m in question.misconceptions for s in m.subject]
    return zlib.crc32("\x01".join(parts).encode())


EVIDENCE_FILE: Final = Evidence()


@dataclass(frozen=True, slots=True)
class Model:
    """One question's word weights and each misconception's own keys."""

    weights: dict[str, float]
    vocab: tuple[frozenset[str], ...]


_models: dict[tuple[int, str], Model] = {}
_models_lock = threading.Lock()
MODELS_KEPT: Final = 64  # questions whose model is kept (each ~20 KB); the others are rebuilt on demand


def model_for(question: Question, matcher: Matcher, lexicon: Lexicon | None) -> Model:
    """The word model of ``question``: from the counts file when it is current for the question
    (~0.5 ms), else counted from its texts (~30 ms), once per question while it stays cached."""
    key = (id(question), question.id)
    cached = _models.get(key)
    if cached is not None:
        return cached
    built = build_model(question, matcher, lexicon, EVIDENCE_FILE.line(question.id))
    with _models_lock:
        if len(_models) >= MODELS_KEPT:
            _models.pop(next(iter(_models)))
        _models[key] = built
    return built


def bank_counts(question: Question, matcher: Matcher, lexicon: Lexicon | None) -> dict[str, Any]:
    """The counts of ``question``'s own texts and each misconception's keys, as a counts line holds them."""
    names = group_names(lexicon)
    wrong, n_wrong = count_texts(wrong_texts(question), matcher, names)
    right, n_right = count_texts(right_texts(question), matcher, names)
    vocab = [
        sorted(set().union(*(count_texts((t,), matcher, names)[0] for t in (m.claim, *m.match, *m.subject))))
        for m in question.misconceptions
    ]
    return {"n_wrong": n_wrong, "n_right": n_right, "wrong": dict(wrong), "right": dict(right), "vocab": vocab}


def build_model(question: Question, matcher: Matcher, lexicon: Lexicon | None, line: dict[str, Any] | None) -> Model:
    """The weights from a counts line (its bank part only if it is current) plus the bank's own counts."""
    if line is not None and line.get("text") != text_stamp(question.text):
        line = None  # answers written to another question under this id
    own = line.get("bank") if line is not None and line.get("bank_stamp") == bank_stamp(question) else None
    if own is None:
        own = bank_counts(question, matcher, lexicon)
    wrong: Counter[str] = Counter(own["wrong"])
    right: Counter[str] = Counter(own["right"])
    n_wrong, n_right = int(own["n_wrong"]), int(own["n_right"])
    if line is not None:
        wrong.update(line["answers"]["wrong"])
        right.update(line["answers"]["right"])
        n_wrong += int(line["answers"]["n_wrong"])
        n_right += int(line["answers"]["n_right"])
    weights: dict[str, float] = {}
    if n_wrong and n_right:
        for k in wrong.keys() | right.keys():
            w = math.log((wrong[k] / n_wrong + A) / (right[k] / n_right + A))
            if abs(w) >= MIN_WEIGHT:
                weights[sys.intern(k)] = w
    return Model(weights, tuple(frozenset(v) for v in own["vocab"]))


_CYRILLIC: Final = re.compile(r"[а-яё]", re.I)
_LATIN: Final = re.compile(r"[a-z]", re.I)


def _mostly_russian(sentence: str) -> bool:
    """A sentence in Russian (English terms allowed). The correct texts a question's weights are
    counted on are Russian, while its wrong phrases include English wordings: an English sentence
    would lean towards the wrong side for its language alone, so it is left to the phrases."""
    return len(_CYRILLIC.findall(sentence)) >= len(_LATIN.findall(sentence))


def lean_of(model: Model, keys: frozenset[str]) -> float:
    total = 0.0
    for k in keys:
        w = model.weights.get(k, 0.0)
        total += w if w > 0 else NEGATIVE_SHARE * w
    return total


def lean_charges(question: Question, text: Text, matcher: Matcher, lexicon: Lexicon | None) -> list[Lean]:
    """The sentences of ``text`` leaning towards one of ``question``'s misconceptions, at most one per
    misconception (its strongest sentence)."""
    if not question.misconceptions:
        return []
    model = model_for(question, matcher, lexicon)
    if not model.weights:
        return []
    names = group_names(lexicon)
    best: dict[int, Lean] = {}
    for si in range(len(text.sentences)):
        if not _mostly_russian(text.written[si] if si < len(text.written) else ""):
            continue
        keys = sentence_keys(text, si, names)
        lean = lean_of(model, keys)
        if lean < ASK_AT:
            continue
        positive = {k: w for k in keys if (w := model.weights.get(k, 0.0)) > 0}
        shares = [sum(positive[k] for k in v & positive.keys()) for v in model.vocab]
        top = max(range(len(shares)), key=shares.__getitem__)
        if shares[top] < ATTRIBUTED * sum(positive.values()):
            continue
        found = Lean(top, si, lean, lean >= CHARGE_AT)
        if top not in best or found.lean > best[top].lean:
            best[top] = found
    return sorted(best.values(), key=lambda x: x.index)
