"""Phrase matching for grading: lemmas, stems, word families and synonyms, negation and opposites.

An answer is read as sentences of *tokens*. Each token carries several keys, any of which may meet a
phrase word:

- the word's key (:func:`bot.core.text.word_key`: stem + transliteration, so ``чекпоинтов`` meets
  ``checkpoint``) and the key of its lemma (pymorphy3: ``легли`` → ``лечь``);
- the id of every synonym group (``data/synonyms/*.yaml``) the word, or a phrase it stands in, belongs
  to: ``задержка`` meets ``latency``, ``моменты Adam`` meets ``состояния оптимизатора``;
- the id of an antonym pair (``больше``/``меньше``) with the side the word is on.

A token is *negated* when a negation (не, нет, ни, без, нельзя, not, no, never, without, n't) stands
right before it, or before a particle in front of it ("не всегда хранит" negates "хранит"); a negation
at the end of a segment reaches back ("мёрджить нельзя"); negation never crosses a comma, colon or
dash. "не только" negates "только", so "не только X" is not "только X".

A phrase matches when each of its words meets a token of one sentence, all within
``len(phrase) + SLACK`` tokens of each other, in any order; with ``clause=True`` (wrong claims) all
within one clause, clauses being split at "а"/"но"/"однако"/"but"/"whereas". A phrase word written after a negation
("не хранит") must meet a negated token. Each word that meets a token of the opposite negation or the
opposite side of an antonym pair is a *flip*; an even number of flips ("не уменьшает" for "увеличивает")
is a plain match, an odd number means the answer states the opposite (:attr:`Hit.FLIPPED`).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Final, NamedTuple

from bot.core.frames import Frame
from bot.core.reading import analyzer, phrase_words, read_sentences
from bot.core.text import CYRILLIC, PREFIX_MIN, is_stopword, normalize, word_key

if TYPE_CHECKING:
    from bot.bank.model import Lexicon

SLACK: Final = 2


class Hit(enum.Enum):
    NONE = 0
    MATCH = 1
    FLIPPED = 2  # the answer states the opposite


# One object per distinct key set among the sets the process keeps (a word's keys, a compiled phrase
# word's keys): ~44,000 frozensets after the warm-up held only ~13,500 distinct values, 6 MB apart.
# Cleared when full (only the sharing of later sets is lost); dict operations are atomic, so the
# catalog's build thread and the event loop may both use it.
_SHARED: dict[frozenset[str], frozenset[str]] = {}
SHARED_MAX: Final = 50_000  # as many as base_keys keeps
_EMPTY: Final[frozenset[str]] = frozenset()


def shared(keys: frozenset[str]) -> frozenset[str]:
    """The one kept object equal to ``keys`` (``keys`` itself the first time)."""
    if not keys:
        return _EMPTY
    got = _SHARED.get(keys)
    if got is None:
        if len(_SHARED) >= SHARED_MAX:
            _SHARED.clear()
        got = _SHARED.setdefault(keys, keys)
    return got


@lru_cache(maxsize=4096)  # a word's keys recur across answers (~2 µs a word saved); ~4 MB at most
def _prefixes(keys: frozenset[str]) -> frozenset[str]:
    """Every key and, for plain keys, each of its prefixes of at least PREFIX_MIN letters."""
    out = set(keys)
    for k in keys:
        if k[0] != "~":
            out.update(k[:n] for n in range(PREFIX_MIN, len(k)))
    return keys if len(out) == len(keys) else frozenset(out)


@dataclass(frozen=True, slots=True)
class Token:
    keys: frozenset[str]
    neg: bool
    polarity: tuple[tuple[str, int], ...] = ()  # (antonym pair id, +1 | -1)
    reach: frozenset[str] = frozenset()  # keys and their prefixes: what phrase words it meets
    clause: int = 0  # the clause of its sentence
    frame: Frame = Frame.ASSERTED  # whose voice it is in (see read_sentences)
    nominal: bool = False  # could be its clause's subject
    soft: bool = False  # negated by «без»/"without" only: no denial of a claim
    segment: int = 0  # its segment in the sentence (commas, colons and dashes cut segments)

    @classmethod
    def make(
        cls, keys: frozenset[str], neg: bool, polarity: tuple[tuple[str, int], ...] = (), place: Place | None = None
    ) -> Token:
        """A token with its reach computed; ``place``: where it stands (clause, frame, …), if anywhere."""
        return cls(keys, neg, polarity, _prefixes(keys), *(place or _NOWHERE))

    @property
    def place(self) -> Place:
        return Place(self.clause, self.frame, self.nominal, self.soft, self.segment)


class Place(NamedTuple):
    """Where a token stands in its sentence (see :class:`Token`)."""

    clause: int = 0
    frame: Frame = Frame.ASSERTED
    nominal: bool = False
    soft: bool = False
    segment: int = 0


_NOWHERE: Final = Place()


@dataclass(frozen=True, slots=True)
class Word:
    """One word of a compiled phrase: ``long`` keys meet a token key they are a prefix of,
    ``short`` ones (under PREFIX_MIN letters, and group ids) only an equal key."""

    keys: frozenset[str]
    neg: bool
    polarity: tuple[tuple[str, int], ...] = ()
    long: frozenset[str] = frozenset()
    short: frozenset[str] = frozenset()

    @classmethod
    def make(cls, keys: frozenset[str], neg: bool, polarity: tuple[tuple[str, int], ...] = ()) -> Word:
        long = frozenset(k for k in keys if len(k) >= PREFIX_MIN and k[0] != "~")
        if len(long) == len(keys):
            return cls(keys, neg, polarity, keys, _EMPTY)
        return cls(keys, neg, polarity, shared(long), shared(keys - long))

    def meets(self, token: Token) -> bool:
        return not self.long.isdisjoint(token.reach) or not self.short.isdisjoint(token.keys)


@dataclass(frozen=True, slots=True)
class Text:
    """An answer read for matching: sentences of tokens and, per key, where it occurs."""

    sentences: tuple[tuple[Token, ...], ...]
    index: dict[str, list[tuple[int, int]]]
    written: tuple[str, ...] = ()  # each sentence as written (the evidence a charge quotes)
    # where each phrase word occurs (a bank's phrases share their words: one lookup per word and text)
    seen: dict[Word, frozenset[tuple[int, int]]] = field(default_factory=dict, compare=False)

    @classmethod
    def make(cls, sentences: list[list[Token]], written: tuple[str, ...] = ()) -> Text:
        index: dict[str, list[tuple[int, int]]] = {}
        for si, sentence in enumerate(sentences):
            for ti, tok in enumerate(sentence):
                for k in tok.reach:
                    index.setdefault(k, []).append((si, ti))
        return cls(tuple(tuple(s) for s in sentences), index, written)


Phrase = tuple[Word, ...]


# After the warm-up and grading the 2,772 dev answers twice it held 24,086 words (hit rate 0.96);
# the bound keeps a long run's stream of new words from growing it without end (~250 B a word)
@lru_cache(maxsize=50_000)
def base_keys(word: str) -> frozenset[str]:
    """The keys of one lower-case word: its own key and, for Russian, its lemma's key."""
    keys = {word_key(word)}
    if CYRILLIC.search(word) and len(word) > 2:
        parses = analyzer().parse(word)  # type: ignore[attr-defined]
        if parses:
            keys.add(word_key(parses[0].normal_form.replace("ё", "е")))
    return shared(frozenset(keys))


class Matcher:
    """Compiled lexicon; turns answers into tokens and phrases into :data:`Phrase`."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self._single: dict[str, set[str]] = {}  # word key -> synonym group keys
        self._multi: list[tuple[Phrase, str]] = []
        # multi-word members by a key of their first word (long: meets a token's reach; short: its keys)
        self._multi_long: dict[str, list[int]] = {}
        self._multi_short: dict[str, list[int]] = {}
        self._polar: dict[str, tuple[str, int]] = {}  # word key -> (pair id, side)
        self._phrases: dict[str, Phrase] = {}
        self._statements: dict[str, Phrase] = {}
        # one Word per distinct (keys, negation, polarity): a bank's ~20,000 phrases repeat their
        # words, and each Word holds three sets (~30 MB for the shipped bank without sharing); by
        # (negation, polarity), then by keys: no key tuple kept per word (~0.9 MB)
        self._words: dict[tuple[bool, tuple[tuple[str, int], ...]], dict[frozenset[str], Word]] = {}
        if lexicon is None:
            return
        for gi, group in enumerate(lexicon.synonyms):
            gkey = f"~s{gi}~"
            for member in group:
                words = self._plain(member)
                if len(words) == 1:
                    for k in words[0].keys:
                        self._single.setdefault(k, set()).add(gkey)
                elif words:
                    for k in words[0].long:
                        self._multi_long.setdefault(k, []).append(len(self._multi))
                    for k in words[0].short:
                        self._multi_short.setdefault(k, []).append(len(self._multi))
                    self._multi.append((words, gkey))
        for ai, (a, b) in enumerate(lexicon.antonyms):
            for side, member in ((1, a), (-1, b)):
                for k in base_keys(normalize(member).strip()):
                    self._polar[k] = (f"~a{ai}~", side)

    @staticmethod
    def _plain(text: str) -> Phrase:
        return tuple(Word.make(base_keys(w), neg) for w, neg in phrase_words(text))

    def _enrich(self, seq: Sequence[Word | Token]) -> list[tuple[frozenset[str], bool, tuple[tuple[str, int], ...]]]:
        """Add synonym-group and antonym keys to a sentence (of an answer or a phrase)."""
        keys = [set(t.keys) for t in seq]
        pol: list[list[tuple[str, int]]] = [[] for _ in seq]
        for i, t in enumerate(seq):
            for k in t.keys:
                groups = self._single.get(k)
                if groups:
                    keys[i] |= groups
                if len(k) > PREFIX_MIN:  # a member "latency" also meets "latencies", not "layer" "layernorm"
                    for n in range(max(PREFIX_MIN, len(k) - 2), len(k)):
                        more = self._single.get(k[:n])
                        if more:
                            keys[i] |= more
                p = self._polar.get(k)
                if p and p not in pol[i]:
                    pol[i].append(p)
                    keys[i].add(p[0])
        if self._multi and len(seq) > 1:
            plain = [t if isinstance(t, Token) else Token.make(t.keys, t.neg) for t in seq]
            for start, tok in enumerate(plain):
                found: set[int] = set()
                for k in tok.reach:
                    found.update(self._multi_long.get(k, ()))
                for k in tok.keys:
                    found.update(self._multi_short.get(k, ()))
                for m in found:
                    member, gkey = self._multi[m]
                    span = _span_at(member, plain, start)
                    if span is not None:
                        for j in span:
                            keys[j].add(gkey)
        return [(frozenset(keys[i]), seq[i].neg, tuple(pol[i])) for i in range(len(seq))]

    def tokens(self, text: str) -> Text:
        """The answer read for matching."""
        out = []
        read = read_sentences(text)
        for sentence in read:
            base = [
                Token.make(base_keys(w), neg, place=Place(c, f, nom, soft, sg))
                for (w, neg, c, f), nom, soft, sg in zip(
                    sentence.words, sentence.nominal, sentence.soft, sentence.segments, strict=True
                )
            ]
            enriched = self._enrich(base)
            out.append([Token.make(k, n, p, t.place) for (k, n, p), t in zip(enriched, base, strict=True)])
        return Text.make(out, tuple(s.text for s in read))

    def phrase(self, text: str) -> Phrase:
        cached = self._phrases.get(text)
        if cached is None:
            plain = self._plain(text)
            cached = tuple(self._word(k, n, p) for k, n, p in self._enrich(plain))
            self._phrases[text] = cached
        return cached

    def statement(self, text: str) -> Phrase:
        """The content words of a key point's own statement (no function words, no single letters)."""
        cached = self._statements.get(text)
        if cached is None:
            plain = tuple(
                Word.make(base_keys(w), neg) for w, neg in phrase_words(text) if len(w) > 1 and not is_stopword(w)
            )
            cached = tuple(self._word(k, n, p) for k, n, p in self._enrich(plain))
            self._statements[text] = cached
        return cached

    def _word(self, keys: frozenset[str], neg: bool, polarity: tuple[tuple[str, int], ...]) -> Word:
        kind = self._words.get((neg, polarity))
        if kind is None:
            kind = self._words.setdefault((neg, polarity), {})
        word = kind.get(keys)
        if word is None:
            keys = shared(keys)
            word = kind[keys] = Word.make(keys, neg, polarity)
        return word

    def find(self, phrase_text: str, text: Text) -> Hit:
        return find(self.phrase(phrase_text), text)

    def claims(self, phrases: Iterable[str], text: Text, *, denied: bool = False) -> list[Claim]:
        """Where the answer asserts any of ``phrases`` (see :func:`claims`)."""
        return [c for p in phrases for c in claims(self.phrase(p), text, p.count(","), denied=denied)]

    def best(self, phrases: Iterable[str], text: Text) -> Hit:
        """MATCH if any phrase matches, else FLIPPED if any matches reversed, else NONE."""
        result = Hit.NONE
        for p in phrases:
            hit = self.find(p, text)
            if hit is Hit.MATCH:
                return hit
            if hit is Hit.FLIPPED:
                result = hit
        return result


def _flip(word: Word | Token, token: Token) -> int:
    flips = int(word.neg != token.neg)
    for pid, side in word.polarity:
        for tid, tside in token.polarity:
            if pid == tid and side != tside:
                flips += 1
    return flips % 2


def _span_at(phrase: Phrase, sentence: Sequence[Token], start: int) -> list[int] | None:
    """Token indexes where a multi-word member occurs in order from ``start``, at most one word apart."""
    if not phrase[0].meets(sentence[start]):
        return None
    span = [start]
    pos = start
    for w in phrase[1:]:
        nxt = next((j for j in range(pos + 1, min(len(sentence), pos + 3)) if w.meets(sentence[j])), None)
        if nxt is None:
            return None
        span.append(nxt)
        pos = nxt
    return span


def _candidates(word: Word, text: Text) -> frozenset[tuple[int, int]]:
    cached = text.seen.get(word)
    if cached is not None:
        return cached
    found: set[tuple[int, int]] = set()
    for k in word.long:
        found.update(text.index.get(k, ()))
    for k in word.short:
        for si, ti in text.index.get(k, ()):
            if k in text.sentences[si][ti].keys:
                found.add((si, ti))
    frozen = text.seen[word] = frozenset(found)
    return frozen


def find(phrase: Phrase, text: Text) -> Hit:
    """Whether ``phrase`` occurs anywhere in ``text`` (in any frame: a key point explained in a
    counterfactual is still known): its words within ``len + SLACK`` tokens of one sentence."""
    if not phrase:
        return Hit.NONE
    width = len(phrase) + SLACK
    flipped = False
    for si, i in sorted(_candidates(phrase[0], text)):
        sentence = text.sentences[si]
        window = sentence[max(0, i - width + 1) : i + width]
        parity = _flip(phrase[0], sentence[i])
        ok = True
        for w in phrase[1:]:
            options = [_flip(w, t) for t in window if w.meets(t)]
            if not options:
                ok = False
                break
            parity += min(options)
        if not ok:
            continue
        if parity % 2 == 0:
            return Hit.MATCH
        flipped = True
    return Hit.FLIPPED if flipped else Hit.NONE


STATED_SHARE: Final = 0.75  # of a key point's own content words, in one sentence, to cover it
STATED_MIN: Final = 4


def states(statement: Phrase, text: Text) -> bool:
    """Whether one sentence of the answer says a key point in the point's own words: most of its
    content words (:data:`STATED_SHARE`, at least :data:`STATED_MIN`), each with its negation
    (a key point pasted word for word, or the card's own wording, covers it)."""
    if len(statement) < STATED_MIN:
        return False
    need = max(STATED_MIN, math.ceil(STATED_SHARE * len(statement)))
    per_sentence: dict[int, int] = {}
    for w in statement:
        hit = {si for si, ti in _candidates(w, text) if text.sentences[si][ti].neg == w.neg}
        for si in hit:
            per_sentence[si] = per_sentence.get(si, 0) + 1
    return any(n >= need for n in per_sentence.values())


def find_all(phrase: Phrase, text: Text, si: int) -> list[Claim]:
    """Every place in sentence ``si`` where ``phrase`` occurs plainly, in any frame."""
    out: list[Claim] = []
    for s, i in sorted(_candidates(phrase[0], text)) if phrase else ():
        if s != si:
            continue
        sentence = text.sentences[si]
        window = list(enumerate(sentence))[max(0, i - len(phrase) - SLACK + 1) : i + len(phrase) + SLACK]
        used = [i]
        for w in phrase[1:]:
            j = next((j for j, t in window if w.meets(t) and t.neg == w.neg), None)
            if j is None:
                break
            used.append(j)
        else:
            out.append(Claim(Hit.MATCH, si, tuple(sorted(used))))
    return out


@dataclass(frozen=True, slots=True)
class Claim:
    """Where an answer asserts a phrase: the sentence, the matched tokens, plain or reversed."""

    hit: Hit
    sentence: int
    tokens: tuple[int, ...]


def claims(phrase: Phrase, text: Text, spread: int = 0, *, denied: bool = False) -> list[Claim]:
    """Every place the answer *asserts* ``phrase``: all its words in one clause of one sentence,
    within ``len + SLACK`` tokens, each in the answer's own voice (:attr:`Frame.ASSERTED`; a phrase
    that is itself negative may also stand in a denied segment). Each word takes the token that
    flips it least; an odd number of flips is :attr:`Hit.FLIPPED`. A negated phrase word needs a
    negated token: the plain words are no claim that the negation is false. The words stand in at
    most ``spread`` + 1 segments (a phrase without commas: in one), so a list «…, поэлементные
    операции, нормализации), выше — compute-bound» does not say «поэлементные операции compute-bound».
    A reversal by «без»/"without" alone is no claim ("ZeRO-3 без offload" denies no offload).
    ``denied``: a denied segment counts too (where a claim's subject or object may stand: «MQA не
    влияет на качество»)."""
    if not phrase:
        return []
    heads = _candidates(phrase[0], text)
    if not heads or not all(_candidates(w, text) for w in phrase[1:]):  # a word the answer never says
        return []
    allowed = {Frame.ASSERTED, Frame.DENIED} if denied or any(w.neg for w in phrase) else {Frame.ASSERTED}
    width = len(phrase) + SLACK
    out: list[Claim] = []
    for si, i in sorted(heads):
        sentence = text.sentences[si]
        head = sentence[i]
        if head.frame not in allowed:
            continue
        lo = max(0, i - width + 1)
        window = [
            (j, t) for j, t in enumerate(sentence[lo : i + width], lo) if t.clause == head.clause and t.frame in allowed
        ]
        parity = _flip(phrase[0], head)
        soft = parity and head.soft
        used = [i]
        ok = True
        for w in phrase[1:]:
            # a negated phrase word needs a negated token: "хранит X" does not deny "не хранит X"
            options = [
                (_flip(w, t), abs(t.segment - head.segment), j)
                for j, t in window
                if w.meets(t) and (t.neg or not w.neg)
            ]
            if not options:
                ok = False
                break
            flips, _, j = min(options)
            parity += flips
            soft = soft or (flips and sentence[j].soft)
            used.append(j)
        if not ok or (phrase[0].neg and not head.neg):
            continue
        segments = {sentence[j].segment for j in used}
        if max(segments) - min(segments) > spread:
            continue
        if parity % 2 == 0:
            out.append(Claim(Hit.MATCH, si, tuple(sorted(used))))
        elif not soft:
            out.append(Claim(Hit.FLIPPED, si, tuple(sorted(used))))
    return out
