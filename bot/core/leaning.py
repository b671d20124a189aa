"""Sentences that lean towards a question's known wrong beliefs: word models per question (issue 28).

The grader's phrases (:mod:`bot.core.matching`) charge a misconception said in one of the wordings the
rubric lists. A listed error said in other words — another verb, English terms, a pronoun for the
subject — often still shows in its *words*. Two models weigh the words a sentence asserts (not those
in a negated, refuted, compared, conditional, asked or quoted part: :class:`~bot.core.frames.Frame`),
each against the question's correct texts: its reference answer, key points, details, follow-up
answers, each misconception's correction, and the correct answers written for it (C_k of N_C
sentences use key k):

- **the question's wrong texts** (its misconceptions' claims and predicates and the fluent wrong
  answers written for it, W_k of N_W): w(k) = ln((W_k/N_W + A) / (C_k/N_C + A)); a sentence's lean is
  its positive weights plus :data:`NEGATIVE_SHARE` of its negative ones. From :data:`CHARGE_AT` it is
  charged with the misconception whose own words give at least :data:`ATTRIBUTED` of the lean (a
  charge shows that misconception's correction), from :data:`ASK_AT` asked about;
- **each misconception as it is said** (its claim, its predicates and the paraphrases written for it:
  six ways a candidate asserts it, ``data/evidence/paraphrases.jsonl``): the same weight with S_k of
  N_S for W_k of N_W, negative weights counted whole (:func:`said_lean`); charged from
  :data:`SAID_CHARGE_AT`, asked about from :data:`SAID_ASK_AT`, and only where the misconception's
  subject, if it has one, is named in the sentence or the one before.

A sentence that mostly shares its keys with one of the question's own correct sentences
(:data:`RESTATES`) is neither charged nor asked about: words alone cannot tell «справа для обучения,
слева для генерации» from «для обучения паддят слева». Nor is a mostly English sentence: the correct
texts are Russian, and English words would lean towards the wrong side for their language alone.
The charge thresholds were chosen on answers the counts were made without (grader_dev4, and
grader_blind's long ``full`` answers with that set left out): at most ~0.3% of correct answers charged
by the word models alone. Charging from lower leans caught more wrong answers on the dev sets, and
charged three times as many correct answers of the test set; between the ask and the charge lines a
sentence is asked about, which accuses nothing.

The counts are data: ``data/evidence/answers.jsonl``, one line per question, made by
``interview-bot grade-evidence`` from the dev answer sets only (never a test set), the paraphrases,
and the bank's texts as they were then. A question whose texts were edited since has its own texts
counted again when it is first graded (~30 ms); paraphrases count only for the claim they were written
for. So an edited rubric counts at once, and a bank of one's own gets the models from its rubric alone.
"""

from __future__ import annotations

import json
import math
import re
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
CHARGE_AT: Final = 10.0
ASK_AT: Final = 5.0
ATTRIBUTED: Final = 0.45  # share of a sentence's lean that must come from the misconception's own words
SAID_CHARGE_AT: Final = 12.0  # the same, against one misconception as it is said (see said_lean)
SAID_ASK_AT: Final = 6.0
SAID_NEGATIVE_SHARE: Final = 1.0
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


def count_texts(
    texts: Iterable[str], matcher: Matcher, names: dict[str, str], sentences: list[frozenset[str]] | None = None
) -> tuple[Counter[str], int]:
    """Per key, the sentences of ``texts`` using it; and the number of sentences (each sentence's keys
    appended to ``sentences`` when given)."""
    counter: Counter[str] = Counter()
    n = 0
    for t in texts:
        read = matcher.tokens(t)
        for si in range(len(read.sentences)):
            keys = sentence_keys(read, si, names)
            counter.update(keys)
            n += 1
            if sentences is not None:
                sentences.append(keys)
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
    yield from (m.correction for m in question.misconceptions)  # each wrong claim's right counterpart


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
class Said:
    """How one misconception is said: per key, the sentences using it among its claim and predicate
    phrases, and among the paraphrases written for it (``data/evidence/paraphrases.jsonl``); ``n`` the
    sentences; ``subject`` the keys of its subject phrases (what it must be said of)."""

    counts: tuple[dict[str, int], ...]
    n: int
    subject: frozenset[str] = frozenset()

    def log_share(self, key: str) -> float:
        count = 0
        for c in self.counts:  # one or two tables: a loop, not a generator (~0.1 µs a key)
            count += c.get(key, 0)
        return math.log(count / self.n + A) if count else _LN_A


@dataclass(frozen=True, slots=True)
class Model:
    """One question's counts, as read from its counts line (the bank's and the answers' parts apart:
    weights are computed per key looked up, ~0.1 µs, not for every key when the model is built)."""

    wrong: tuple[dict[str, int], ...]
    right: tuple[dict[str, int], ...]
    n_wrong: int
    n_right: int
    vocab: tuple[frozenset[str], ...]  # each misconception's own keys (claim, predicates, subject)
    said: tuple[Said, ...]
    own: tuple[list[str], ...] = ()  # the keys of each sentence of its and its topic's correct texts (_restates)

    def weight(self, key: str) -> float:
        """The question-level weight of ``key`` (0 when the key is too rare to tell, or light)."""
        if not self.n_wrong or not self.n_right:
            return 0.0
        w = c = 0
        for d in self.wrong:
            w += d.get(key, 0)
        for d in self.right:
            c += d.get(key, 0)
        if not w and not c:
            return 0.0
        weight = math.log((w / self.n_wrong + A) / (c / self.n_right + A))
        return weight if abs(weight) >= MIN_WEIGHT else 0.0

    def right_log(self, key: str) -> float:
        """ln(C_k / N_C + A): how usual ``key`` is in the question's correct texts."""
        c = 0
        for d in self.right:
            c += d.get(key, 0)
        return math.log(c / self.n_right + A) if c else _LN_A


_models: dict[tuple[int, str], Model] = {}
_models_lock = threading.Lock()
MODELS_KEPT: Final = 16  # questions whose model is kept (each ~80 KB); the others are read again (~3 ms)


def model_for(question: Question, matcher: Matcher, lexicon: Lexicon | None) -> Model:
    """The word model of ``question``: from the counts file when it is current for the question
    (~3 ms), else counted from its texts (~30 ms), once per question while it stays cached."""
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
    """The counts of ``question``'s own texts, each misconception's keys and how it is said (its claim
    and predicates), as a counts line holds them."""
    names = group_names(lexicon)
    wrong, n_wrong = count_texts(wrong_texts(question), matcher, names)
    own: list[frozenset[str]] = []
    right, n_right = count_texts(right_texts(question), matcher, names, own)
    vocab, said = [], []
    for m in question.misconceptions:
        counts, n = count_texts((m.claim, *m.match), matcher, names)
        subject = sorted(count_texts(m.subject, matcher, names)[0])
        said.append({"n": n, "wrong": dict(counts), "subject": subject})
        vocab.append(sorted(counts.keys() | set(subject)))
    return {
        "n_wrong": n_wrong,
        "n_right": n_right,
        "wrong": dict(wrong),
        "right": dict(right),
        "vocab": vocab,
        "said": said,
        "own": [sorted(keys) for keys in own if len(keys) >= RESTATES_MIN],
    }


def claim_stamp(claim: str) -> int:
    """What the counts file records of a misconception its paraphrases were written for."""
    return zlib.crc32(normalize(claim).encode())


def build_model(question: Question, matcher: Matcher, lexicon: Lexicon | None, line: dict[str, Any] | None) -> Model:
    """The model from a counts line (its bank part only if it is current, else counted anew) plus
    its answers' part (only if they were written to this question's text)."""
    if line is not None and line.get("text") != text_stamp(question.text):
        line = None  # answers written to another question under this id
    own = line.get("bank") if line is not None and line.get("bank_stamp") == bank_stamp(question) else None
    if own is None:
        own = bank_counts(question, matcher, lexicon)
    answers: dict[str, Any] = line["answers"] if line is not None else _NO_ANSWERS
    return Model(
        wrong=(own["wrong"], answers["wrong"]),
        right=(own["right"], answers["right"]),
        n_wrong=int(own["n_wrong"]) + int(answers["n_wrong"]),
        n_right=int(own["n_right"]) + int(answers["n_right"]),
        vocab=tuple(frozenset(v) for v in own["vocab"]),
        said=_said(question, own, line),
        own=(*own["own"], *(line.get("guarded", []) if line is not None else [])),
    )


_NO_ANSWERS: Final[dict[str, Any]] = {"wrong": {}, "right": {}, "n_wrong": 0, "n_right": 0}


def _said(question: Question, own: dict[str, Any], line: dict[str, Any] | None) -> tuple[Said, ...]:
    """Each misconception's claim and predicates, plus its paraphrases if they were written for this claim."""
    written = line.get("said", []) if line is not None else []
    out = []
    for i, m in enumerate(question.misconceptions):
        counts: tuple[dict[str, int], ...] = (own["said"][i]["wrong"],)
        n = int(own["said"][i]["n"])
        if i < len(written) and written[i]["claim"] == claim_stamp(m.claim):
            counts, n = (*counts, written[i]["wrong"]), n + int(written[i]["n"])
        out.append(Said(counts, n, frozenset(own["said"][i]["subject"])))
    return tuple(out)


_CYRILLIC: Final = re.compile(r"[а-яё]", re.I)
_LATIN: Final = re.compile(r"[a-z]", re.I)


def _mostly_russian(sentence: str) -> bool:
    """A sentence in Russian (English terms allowed). The correct texts a question's weights are
    counted on are Russian, while its wrong phrases include English wordings: an English sentence
    would lean towards the wrong side for its language alone, so it is left to the phrases."""
    return len(_CYRILLIC.findall(sentence)) >= len(_LATIN.findall(sentence))


def lean_of(model: Model, keys: frozenset[str]) -> float:
    """The question-level lean of a sentence's keys."""
    total = 0.0
    for k in keys:
        w = model.weight(k)
        total += w if w > 0 else NEGATIVE_SHARE * w
    return total


def said_lean(model: Model, index: int, keys: frozenset[str], right: dict[str, float]) -> float:
    """How much a sentence's keys lean towards misconception ``index`` as it is said, against the
    question's correct texts: ln(S_k / N_S + A) − ln(C_k / N_C + A) per key, negative ones whole
    (``right``: the keys' ln(C_k / N_C + A), computed once for all misconceptions)."""
    said = model.said[index]
    if not said.n or not model.n_right or not model.n_wrong:
        return 0.0
    total = 0.0
    for k in keys:
        w = said.log_share(k) - right[k]
        total += w if w > 0 else SAID_NEGATIVE_SHARE * w
    return total


_LN_A: Final = math.log(A)


def lean_charges(question: Question, text: Text, matcher: Matcher, lexicon: Lexicon | None) -> list[Lean]:
    """The sentences of ``text`` leaning towards one of ``question``'s misconceptions, at most one per
    misconception (its strongest sentence; a charge before an ask)."""
    if not question.misconceptions:
        return []
    model = model_for(question, matcher, lexicon)
    names = group_names(lexicon)
    best: dict[int, Lean] = {}
    keys_of: dict[int, frozenset[str]] = {}
    before: frozenset[str] = frozenset()  # the sentence before: a subject named there may be «он» here
    for si in range(len(text.sentences)):
        keys = keys_of[si] = sentence_keys(text, si, names)
        near, before = keys | before, keys
        if not _mostly_russian(text.written[si] if si < len(text.written) else ""):
            continue
        for found in (_by_question(model, keys, si), *_by_misconception(model, keys, near, si)):
            if found is None:
                continue
            old = best.get(found.index)
            if old is None or (found.certain, found.lean) > (old.certain, old.lean):
                best[found.index] = found
    if best:
        best = {i: lean for i, lean in best.items() if not _restates(keys_of[lean.sentence], model.own)}
    return sorted(best.values(), key=lambda x: x.index)


RESTATES: Final = 0.5  # Jaccard of keys with a sentence of the bank's correct texts: it says what they say
RESTATES_MIN: Final = 2  # a correct sentence of fewer keys is not kept for that


def _restates(keys: frozenset[str], own: Iterable[Iterable[str]]) -> bool:
    """Whether a sentence says what one of the question's own correct sentences says (most keys
    shared): the card's «справа для обучения, слева для генерации» shares its words with the wrong
    «для обучения паддят слева», and a user pasting it is right."""
    return any(len(keys.intersection(o)) >= RESTATES * len(keys.union(o)) for o in own if o)


def leans(model: Model, keys: frozenset[str], near: frozenset[str]) -> bool:
    """Whether a sentence's keys would be charged or asked about (``near``: with the sentence before)."""
    return _by_question(model, keys, 0) is not None or any(True for _ in _by_misconception(model, keys, near, 0))


def _by_question(model: Model, keys: frozenset[str], si: int) -> Lean | None:
    """The question-level lean, put on the misconception whose own words give most of it."""
    lean = lean_of(model, keys)
    if lean < ASK_AT:
        return None
    positive = {k: w for k in keys if (w := model.weight(k)) > 0}
    shares = [sum(positive[k] for k in v & positive.keys()) for v in model.vocab]
    top = max(range(len(shares)), key=shares.__getitem__)
    if shares[top] < ATTRIBUTED * sum(positive.values()):
        return None
    return Lean(top, si, lean, lean >= CHARGE_AT)


def _by_misconception(model: Model, keys: frozenset[str], near: frozenset[str], si: int) -> Iterator[Lean]:
    """Each misconception the sentence leans to as it is said, if its subject (when it has one) is
    named in the sentence or the one before (``near``): «как Medusa, предсказывает независимо» is
    no claim about EAGLE."""
    right = {k: model.right_log(k) for k in keys}
    for i, said in enumerate(model.said):
        if said.subject and near.isdisjoint(said.subject):
            continue
        lean = said_lean(model, i, keys, right)
        if lean >= SAID_ASK_AT:
            yield Lean(i, si, lean, lean >= SAID_CHARGE_AT)
