"""The offline grader: a rubric-based score for a free-text answer, deterministic, no network.

Reading the answer (see :mod:`bot.core.matching`): lemmas and stems, the bank's synonym groups and
antonym pairs, negation, one sentence at a time.

- A key point is **covered** when one of its ``match`` phrases occurs; **contradicted** when none
  occurs but one occurs reversed (negated, or with an antonym swapped: "увеличивает" for "уменьшает").
- A **misconception** is detected when one of its ``match`` phrases occurs (not negated).

The score (0..1), in this order:

1. ``base = CORE_SHARE · √core + (1 − CORE_SHARE) · bonus``, where ``core`` and ``bonus`` are the
   shares of covered core and bonus points (a question without bonus points counts ``bonus = core``). All
   core points and no bonus give ``CORE_SHARE`` = 0.85, above the "good" line, so missing a bonus
   point never pulls a correct answer below "good"; one core point of three gives 0.49, "partial".
   The base is at least ``BREADTH · √(share of all points)`` (0.7): an answer covering most of the
   rubric while a core point's phrasing was missed is still "partial", not zero.
2. Prose checks: a bare list of terms (:func:`looks_stuffed`) is multiplied by ``STUFFING_FACTOR``
   (0.3); an answer under ``SHORT_WORDS`` (8) words by ``words / SHORT_WORDS``.
3. Errors: a detected misconception or a contradicted key point caps the score at ``ERROR_CAP``
   (0.3) and then multiplies it by ``ERROR_FACTOR`` (0.6), so a wrong answer ends at most at 0.18.

Verdicts: ``good`` ≥ ``GOOD`` (0.70), ``partial`` ≥ ``PARTIAL`` (0.35), else ``weak`` — the same
lines as an interviewer's correct / partially correct / incorrect.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from bot.bank import KeyPoint, Lexicon, Misconception, Question
from bot.core.frames import Frame
from bot.core.leaning import lean_charges
from bot.core.matching import Claim, Hit, Matcher, Text, base_keys, find_all, states
from bot.core.text import STOPWORDS, normalize, words

CORE_SHARE: Final = 0.85
BREADTH: Final = 0.7  # most of the rubric covered in other words than a core point's phrases: at least partial
CORE_CURVE: Final = 0.5  # credit for a share s of core points is √s: one of three core points is "partial"
STUFFING_FACTOR: Final = 0.3
SHORT_WORDS: Final = 8
ERROR_CAP: Final = 0.3
ERROR_FACTOR: Final = 0.6
SIDE_CAP: Final = 0.6  # a slip on a side detail: at most "partial"
GOOD: Final = 0.70
PARTIAL: Final = 0.35

_SEGMENTS = re.compile(r"[,;\n•·|/]+|\s-\s")
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
# Function words of both languages: prose has them, a list of terms does not.
_FUNCTION: Final = STOPWORDS | frozenset(
    [
        "значит",
        "просто",
        "типа",
        "вроде",
        "который",
        "которые",
        "которая",
        "которое",
        "i",
        "am",
        "im",
        "not",
        "no",
        "sure",
        "about",
        "something",
        "some",
        "maybe",
        "think",
        "guess",
        "so",
        "if",
        "but",
        "they",
        "them",
        "he",
        "she",
        "was",
        "were",
        "been",
        "has",
        "have",
        "had",
        "will",
        "would",
        "should",
        "could",
        "may",
        "might",
        "just",
        "only",
        "also",
        "very",
        "more",
        "most",
        "less",
        "much",
        "many",
        "such",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "all",
        "any",
        "each",
        "every",
        "both",
    ]
)
_UNSURE: Final = re.compile(
    r"не знаю|не помню|не уверен|не сталкивал|затрудняюсь|хз\b|забыл|not sure|don'?t know|no idea|"
    r"i forgot|не могу сказать|понятия не имею"
)


@dataclass(frozen=True, slots=True)
class Grade:
    covered: tuple[int, ...]  # indexes into question.key_points
    missed: tuple[int, ...]
    coverage: float  # weighted coverage before prose checks and errors, 0..1
    score: float  # the final score, 0..1
    stuffed: bool  # reads like a list of terms, not an answer
    words: int
    contradicted: tuple[int, ...] = ()  # key points the answer states the opposite of
    misconceptions: tuple[int, ...] = ()  # indexes into question.misconceptions
    unsure: bool = False  # "не знаю", "not sure"
    # Filled by the LLM examiner (bot.services.grading); empty from the offline grader.
    errors: tuple[tuple[str, str], ...] = ()  # (wrong claim, correction) beyond the bank's misconceptions
    feedback: str = ""
    follow_up: str = ""
    backend: str = "keywords"
    disagreement: int | None = None  # the LLM examiner's own score where the offline grade was lower
    # The sentence of the answer behind each charge (same order as misconceptions / contradicted), and
    # the misconceptions the grader is unsure of: (index, sentence), asked about, not charged.
    evidence: tuple[str, ...] = ()
    reversal_evidence: tuple[str, ...] = ()
    asks: tuple[tuple[int, str], ...] = ()

    @property
    def verdict(self) -> str:
        """'good' | 'partial' | 'weak'."""
        if self.score >= GOOD:
            return "good"
        return "partial" if self.score >= PARTIAL else "weak"

    @property
    def percent(self) -> int:
        return round(100 * self.score)

    @property
    def has_errors(self) -> bool:
        return bool(self.misconceptions or self.contradicted)


@lru_cache(maxsize=4)
def matcher_for(lexicon: Lexicon | None) -> Matcher:
    """The compiled matcher of a bank's lexicon (built once per bank)."""
    return Matcher(lexicon)


WARM_PHRASES: Final = 60_000  # prepared ahead at most (the shipped bank has ~41k, sharing most of their words)


def warm_up(questions: Iterable[Question], lexicon: Lexicon | None) -> Iterator[int]:
    """Prepare the match phrases of ``questions`` ahead of their first answer (a cold phrase costs
    ~0.05-0.15 ms of morphology, a cold answer ~40 ms, a warm one ~0.5 ms). One phrase per step (so
    the caller can stop at any millisecond); yields the phrases prepared so far; stops at
    ``WARM_PHRASES``. The matcher itself must be built first (:func:`matcher_for`)."""
    matcher = matcher_for(lexicon)
    done = 0
    for question in questions:
        for point in question.key_points:
            matcher.statement(point.text)
        every = (
            *(k.match for k in question.key_points),
            *(p for m in question.misconceptions for p in (m.match, m.subject, m.object)),
        )
        for phrases in every:
            for phrase in phrases:
                matcher.phrase(phrase)
                done += 1
                yield done
        if done >= WARM_PHRASES:
            return


def looks_stuffed(text: str) -> bool:
    """A list of terms rather than sentences: almost no function words, or short fragments
    separated by commas/new lines."""
    text = _CODE.sub(" ", text)  # code is an answer, not a list of terms
    # formula letters (Q, K, V, d, k) are not terms; Russian one-letter words (и, в, к, а) are function words
    tokens = [w for w in words(text) if len(w) > 1 or w in _FUNCTION]
    if len(tokens) < 4:
        return False
    function_share = sum(1 for w in tokens if w in _FUNCTION) / len(tokens)
    segments = [s for s in _SEGMENTS.split(text) if s.strip()]
    avg_segment = len(tokens) / max(1, len(segments))
    return function_share < 0.06 or (avg_segment < 3.0 and function_share < 0.15)


@dataclass(frozen=True, slots=True)
class Charge:
    """A wrong claim found in an answer, with the sentence that makes it."""

    index: int  # into question.misconceptions (or question.key_points for a reversal)
    sentence: str
    certain: bool = True


def find_charges(
    question: Question, text: Text, matcher: Matcher, *, coverage: bool = True
) -> tuple[list[Charge], list[Charge], list[Charge], list[int]]:
    """The answer's wrong claims: (misconceptions asserted, misconceptions to ask about, key points
    asserted reversed, key points covered). ``coverage=False``: the charges only (a key point is
    then looked up as covered only where a reversal would otherwise be charged)."""
    covered: list[int] = []
    reversed_: list[Charge] = []
    written = _formula_form(" ".join(text.written)) if any(formulas(kp.text) for kp in question.key_points) else ""
    for i, kp in enumerate(question.key_points):

        def is_covered(kp: KeyPoint = kp) -> bool:
            return (
                matcher.best(kp.match, text) is Hit.MATCH
                or states(matcher.statement(kp.text), text)
                or any(f in written for f in formulas(kp.text))
            )

        if coverage and is_covered():
            covered.append(i)
            continue
        # a reversal is a claim of two words or more stated the other way round, not a lone word negated
        flip = next(
            (
                c
                for p in kp.match
                if len(matcher.phrase(p)) > 1
                for c in matcher.claims((p,), text)
                if c.hit is Hit.FLIPPED
            ),
            None,
        )
        if flip is not None and (coverage or not is_covered()):
            reversed_.append(Charge(i, quote(text, flip)))
    charged: list[Charge] = []
    unsure: list[Charge] = []
    for i, m in enumerate(question.misconceptions):
        found = _claim(matcher, m, text)
        if found is None:
            continue
        certain, claim = found
        (charged if certain else unsure).append(Charge(i, quote(text, claim), certain))
    return charged, unsure, reversed_, covered


_MATH: Final = "A-Za-z0-9_∂√ᵀ·×²³^*/+\\-−'’."
_FORMULA: Final = re.compile(rf"[{_MATH}(]*[A-Za-z0-9_∂√ᵀ²³)]\s*[=≈]\s*[{_MATH}() ]+")
_FORMULA_MIN: Final = 6  # characters without spaces: «y=x+f(x)»


def _formula_form(text: str) -> str:
    return re.sub(r"\s+", "", text.lower()).replace("−", "-").replace("·", "*").replace("×", "*")


@lru_cache(maxsize=4096)
def formulas(key_point: str) -> tuple[str, ...]:
    """The formulas a key point writes («y = x + F(x)», «∂y/∂x = I + ∂F/∂x»), as compared: an answer
    that writes one of them states the point, though the words around it differ."""
    found = (_formula_form(m.group()).strip(".(),") for m in _FORMULA.finditer(key_point))
    return tuple(f for f in found if len(f) >= _FORMULA_MIN and _telling(f))


def _telling(formula: str) -> bool:
    """Whether a formula says something of its own: letters on both sides and an operation on the right
    («c≈6*n*d», «q=x*w_q»), or a named setting («labels=-100», «strict=false»); not a number
    («d=4096», «batch=1») nor a bare equation of names («h_kv=h»)."""
    left, _, right = re.split("([=≈])", formula, maxsplit=1)
    if re.search("[a-z]", left) and re.search("[a-z]", right) and re.search(r"[-+*/()√ᵀ^²]", right):
        return True
    name = re.split(r"[.(]", left)[-1]
    return bool(re.fullmatch("[a-z_]{6,}", name)) and len(right) >= 2


QUOTE_CHARS: Final = 300  # a longer sentence is quoted around the claim
QUOTE_CONTEXT: Final = 8  # words either side of the claim


def quote(text: Text, claim: Claim) -> str:
    """The sentence that makes a claim, as written; a long one (a spoken transcript has no full
    stops) cut to the claim and a few words either side."""
    written = text.written[claim.sentence]
    if len(written) <= QUOTE_CHARS:
        return written
    tokens = [text.sentences[claim.sentence][j] for j in claim.tokens]
    spans = [m.span() for m in _WORD_RE.finditer(normalize(written))]
    hits = [
        k
        for k, (a, b) in enumerate(spans)
        if any(not base_keys(normalize(written[a:b])).isdisjoint(t.keys) for t in tokens)
    ]
    if not hits:
        return written[:QUOTE_CHARS].rstrip() + "…"
    lo, hi = max(0, min(hits) - QUOTE_CONTEXT), min(len(spans) - 1, max(hits) + QUOTE_CONTEXT)
    start, end = spans[lo][0], spans[hi][1]
    return ("…" if start else "") + written[start:end] + ("…" if end < len(written) else "")


_WORD_RE: Final = re.compile(r"[0-9a-zа-я]+")


def _claim(matcher: Matcher, m: Misconception, text: Text) -> tuple[bool, Claim] | None:
    """Whether the answer asserts misconception ``m``: (sure, sentence index), or None.

    Its predicate must be asserted (:func:`bot.core.matching.claims`); its object, if it has one, must
    stand in the same clause; its subject, if it has one, too. A clause that names another possible
    subject («маленькая draft-модель предлагает токены» in an answer about Medusa, «без обучения
    работает только prompt lookup») is about something else; a clause with no subject of its own is
    unsure (asked, not charged)."""
    unsure: Claim | None = None
    for c in matcher.claims(m.match, text):
        if c.hit is not Hit.MATCH:
            continue
        sentence = text.sentences[c.sentence]
        clause = sentence[c.tokens[0]].clause
        if m.object and not _in_clause(matcher, m.object, text, c.sentence, clause):
            continue
        if not m.subject:
            return True, c
        named = _subject_at(matcher, m.subject, text, c, clause)
        if named is _Named.BINDS:
            return True, c
        if named is _Named.LATER:  # named only after it, past a comma or dash, or far:
            start, segment = c.tokens[0], sentence[c.tokens[0]].segment
            if not any(t.nominal and t.segment == segment for t in sentence[:start]):
                unsure = unsure or c  # "train it for many epochs — reward models are small …": asked
            continue  # «XGBoost по умолчанию растит по уровням, LightGBM — по листьям»: about XGBoost
        if _in_clause(matcher, m.subject, text, c.sentence, clause, anywhere=True):
            continue  # the subject is what the clause contrasts with («в отличие от Elo, порядок не влияет»)
        if any(
            t.nominal and t.clause == clause and t.frame is Frame.ASSERTED
            for j, t in enumerate(sentence)
            if j not in c.tokens
        ):
            continue  # another subject: the clause is about something else («без обучения работает только X»)
        if unsure is None:
            unsure = c
    return (False, unsure) if unsure is not None else None


AFTER_PREDICATE: Final = 6  # a subject after its predicate stands close («по уровням растит LightGBM»)


class _Named(enum.Enum):
    BINDS = "binds"  # before the predicate, or close after it in its stretch
    LATER = "later"  # in the clause, but only later on
    NOT = "not"  # not in the clause (asserted or denied)


def _subject_at(matcher: Matcher, subject: tuple[str, ...], text: Text, c: Claim, clause: int) -> _Named:
    """Where a misconception's subject stands against its predicate ``c`` in ``clause``: binding it
    (before it, or close after it without a comma between) or only later — «XGBoost растёт по уровням,
    LightGBM — по листьям» says nothing of LightGBM growing by levels."""
    sentence = text.sentences[c.sentence]
    start = c.tokens[0]
    found = _Named.NOT
    for s in matcher.claims(subject, text, denied=True):
        if s.sentence != c.sentence or s.hit is not Hit.MATCH or sentence[s.tokens[0]].clause != clause:
            continue
        at = s.tokens[0]
        if at < start or (sentence[at].segment == sentence[start].segment and at - start <= AFTER_PREDICATE):
            return _Named.BINDS
        found = _Named.LATER
    return found


def _in_clause(
    matcher: Matcher, phrases: tuple[str, ...], text: Text, si: int, clause: int, *, anywhere: bool = False
) -> bool:
    """Whether one of ``phrases`` stands in that clause: asserted or denied, or (``anywhere``) in any frame."""
    if anywhere:
        return any(
            all(text.sentences[si][j].clause == clause for j in c.tokens)
            for p in phrases
            for c in find_all(matcher.phrase(p), text, si)
        )
    return any(
        c.sentence == si and text.sentences[si][c.tokens[0]].clause == clause and c.hit is Hit.MATCH
        for c in matcher.claims(phrases, text, denied=True)
    )


def grade(
    question: Question, text: str, lexicon: Lexicon | None = None, *, waived: frozenset[str] = frozenset()
) -> Grade:
    """Grade ``text`` as an answer to ``question`` (``lexicon``: the bank's synonyms/antonyms).
    ``waived``: charges the user disputed (:func:`charge_key`), left out of the score."""
    matcher = matcher_for(lexicon)
    sentences = matcher.tokens(text)
    charged, unsure, reversed_, covered = find_charges(question, sentences, matcher)
    thorough = bool(question.key_points) and len(covered) >= THOROUGH * len(question.key_points)
    _add_leaning(question, sentences, matcher, lexicon, (charged, unsure), ask_only=thorough)
    charged = [c for c in charged if charge_key("m", c.index) not in waived]
    reversed_ = [c for c in reversed_ if charge_key("k", c.index) not in waived]
    points = question.key_points
    missed = tuple(i for i in range(len(points)) if i not in covered)
    core = [i for i, p in enumerate(points) if p.core] or list(range(len(points)))
    bonus = [i for i in range(len(points)) if i not in core]
    core_share = sum(1 for i in core if i in covered) / len(core) if core else 0.0
    bonus_share = sum(1 for i in bonus if i in covered) / len(bonus) if bonus else core_share
    coverage = CORE_SHARE * core_share**CORE_CURVE + (1 - CORE_SHARE) * bonus_share
    coverage = max(coverage, BREADTH * (len(covered) / len(points)) ** 0.5) if points else 0.0
    n_words = len(words(text))
    stuffed = looks_stuffed(text)
    score = coverage
    if stuffed:
        score *= STUFFING_FACTOR
    elif n_words < SHORT_WORDS:
        score *= n_words / SHORT_WORDS
    wrong_core = any(question.misconceptions[c.index].core for c in charged) or any(
        points[c.index].core for c in reversed_
    )
    if wrong_core:
        score = min(score, ERROR_CAP) * ERROR_FACTOR
    elif charged or reversed_:
        score = min(score, SIDE_CAP)
    unsure_words = bool(_UNSURE.search(normalize(text)))
    return Grade(
        covered=tuple(covered),
        missed=missed,
        coverage=round(coverage, 3),
        score=round(score, 3),
        stuffed=stuffed,
        words=n_words,
        contradicted=tuple(c.index for c in reversed_),
        misconceptions=tuple(c.index for c in charged),
        unsure=unsure_words,
        evidence=tuple(c.sentence for c in charged),
        reversal_evidence=tuple(c.sentence for c in reversed_),
        asks=tuple((c.index, c.sentence) for c in unsure if charge_key("m", c.index) not in waived),
    )


# Of the key points (all of them, up to nine): an answer this complete is not charged on its words' lean alone.
THOROUGH: Final = 0.9


def _add_leaning(
    question: Question,
    text: Text,
    matcher: Matcher,
    lexicon: Lexicon | None,
    into: tuple[list[Charge], list[Charge]],
    *,
    ask_only: bool = False,
) -> None:
    """Add the misconceptions the word model finds (:mod:`bot.core.leaning`) that the phrases did not:
    a sure one is charged, an unsure one asked about. ``ask_only`` (an answer that states (nearly) every
    key point): a lean is asked about, never charged — words alone cannot tell «гасит вклад лёгких
    примеров» from «усиливает вклад лёгких», and an answer this complete has shown what it knows."""
    charged, unsure = into
    known = {c.index for c in charged} | {c.index for c in unsure}
    for lean in lean_charges(question, text, matcher, lexicon):
        if lean.index in known:
            continue
        whole = quote(text, Claim(Hit.MATCH, lean.sentence, ()))  # the sentence, cut as a long one is
        sure = lean.certain and not ask_only
        (charged if sure else unsure).append(Charge(lean.index, whole, sure))


def charge_key(kind: str, index: int) -> str:
    """The key of a charge: ``m<i>`` a misconception, ``k<i>`` a reversed key point."""
    return f"{kind}{index}"


def hint(point: KeyPoint) -> str:
    """The hint for a missed key point: its whole statement, as one sentence."""
    text = point.text.strip()
    return text if text.endswith((".", "!", "?", "…")) else f"{text}."
