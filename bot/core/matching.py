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
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from bot.core.text import PREFIX_MIN, normalize, word_key

if TYPE_CHECKING:
    from bot.bank.model import Lexicon

SLACK: Final = 2
NEGATORS: Final = frozenset(
    {"не", "нет", "ни", "без", "нельзя", "not", "no", "never", "without", "nor", "cannot"}
    # "перестаёт считать" = "не считает"
    | {"перестает", "перестают", "перестал", "перестала", "перестали", "прекращает", "прекращают", "stops", "ceases"}
)
_NT_STEMS: Final = frozenset(
    [
        "don",
        "doesn",
        "didn",
        "isn",
        "aren",
        "wasn",
        "weren",
        "won",
        "wouldn",
        "can",
        "couldn",
        "shouldn",
        "hasn",
        "haven",
        "hadn",
        "mustn",
        "needn",
        "ain",
    ]
)
# Words a negation reaches across: "не всегда хранит", "is not always stored", "не нужно хранить".
_PASS: Final = frozenset(
    [
        "все",
        "всегда",
        "обязательно",
        "совсем",
        "сразу",
        "нужно",
        "надо",
        "очень",
        "так",
        "вообще",
        "особо",
        "to",
        "be",
        "been",
        "always",
        "necessarily",
        "really",
        "all",
        "need",
        "needed",
        "very",
        "the",
        "a",
        "an",
        "actually",
    ]
)
_SENTENCE: Final = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD: Final = re.compile(r"[0-9a-zа-я]+")
_CYR: Final = re.compile(r"[а-я]")


class Hit(enum.Enum):
    NONE = 0
    MATCH = 1
    FLIPPED = 2  # the answer states the opposite


@lru_cache(maxsize=4096)  # a word's keys recur across answers (~2 µs a word saved); ~4 MB at most
def _prefixes(keys: frozenset[str]) -> frozenset[str]:
    """Every key and, for plain keys, each of its prefixes of at least PREFIX_MIN letters."""
    out = set(keys)
    for k in keys:
        if k[0] != "~":
            out.update(k[:n] for n in range(PREFIX_MIN, len(k)))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Token:
    keys: frozenset[str]
    neg: bool
    polarity: tuple[tuple[str, int], ...] = ()  # (antonym pair id, +1 | -1)
    reach: frozenset[str] = frozenset()  # keys and their prefixes: what phrase words it meets
    clause: int = 0  # the clause of its sentence
    denied: bool = False  # its segment is negated (see _sentences)

    @classmethod
    def make(
        cls,
        keys: frozenset[str],
        neg: bool,
        polarity: tuple[tuple[str, int], ...] = (),
        clause: int = 0,
        denied: bool = False,
    ) -> Token:
        return cls(keys, neg, polarity, _prefixes(keys), clause, denied)


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
        return cls(keys, neg, polarity, long, keys - long)

    def meets(self, token: Token) -> bool:
        return not self.long.isdisjoint(token.reach) or not self.short.isdisjoint(token.keys)


@dataclass(frozen=True, slots=True)
class Text:
    """An answer read for matching: sentences of tokens and, per key, where it occurs."""

    sentences: tuple[tuple[Token, ...], ...]
    index: dict[str, list[tuple[int, int]]]

    @classmethod
    def make(cls, sentences: list[list[Token]]) -> Text:
        index: dict[str, list[tuple[int, int]]] = {}
        for si, sentence in enumerate(sentences):
            for ti, tok in enumerate(sentence):
                for k in tok.reach:
                    index.setdefault(k, []).append((si, ti))
        return cls(tuple(tuple(s) for s in sentences), index)


Phrase = tuple[Word, ...]


_morph: object | None = None


def _analyzer() -> object:
    global _morph
    if _morph is None:
        import pymorphy3

        _morph = pymorphy3.MorphAnalyzer()
    return _morph


def is_known_russian(word: str) -> bool:
    """Whether the morphological dictionary knows the (lower-case) word: «кто» yes, «ппо» no."""
    return bool(_analyzer().word_is_known(word))  # type: ignore[attr-defined]


@lru_cache(maxsize=200_000)
def base_keys(word: str) -> frozenset[str]:
    """The keys of one lower-case word: its own key and, for Russian, its lemma's key."""
    keys = {word_key(word)}
    if _CYR.search(word) and len(word) > 2:
        parses = _analyzer().parse(word)  # type: ignore[attr-defined]
        if parses:
            keys.add(word_key(parses[0].normal_form.replace("ё", "е")))
    return frozenset(keys)


# Clauses: parts of a sentence in contrast ("TP режет матрицы, а PP делит слои"); a wrong claim must
# sit in one. Segments: what a negation cannot reach across (commas, dashes, colons).
_CLAUSE: Final = re.compile(r",?\s(?:а|но|однако|зато|тогда как|whereas|while|but)\s")
_SEGMENT: Final = re.compile(r"[,:]|\s[—–-]\s|—|–")


def _clause_words(segment: str) -> list[tuple[str, bool]]:
    """Words of one segment with their negation flag. A negation reaches the next word (across
    particles: "не всегда хранит"); one at the end of a segment reaches back ("мёрджить нельзя")."""
    raw = _WORD.findall(segment)
    words: list[tuple[str, bool]] = []
    pending = 0  # how many following words a negation still reaches
    passed: int | None = None  # a particle the negation passed over ("не нужно" at the end)
    i = 0
    while i < len(raw):
        w = raw[i]
        if w in _NT_STEMS and i + 1 < len(raw) and raw[i + 1] == "t":
            pending, passed = 2, None
            i += 2
            continue
        if w in NEGATORS:
            pending, passed = 2, None
            if i + 1 == len(raw) and words:  # a trailing negation: "хранить нельзя", "needed not"
                words[-1] = (words[-1][0], True)
                pending = 0
            i += 1
            continue
        if pending and w in _PASS:
            pending -= 1
            passed = len(words)
            words.append((w, False))
            i += 1
            continue
        words.append((w, pending > 0))
        pending, passed = 0, None
        i += 1
    if pending and passed is not None:  # "X не нужно": the particle itself is negated
        words[passed] = (words[passed][0], True)
    return words


_FRAMES: Final = frozenset({"что", "чтобы", "будто", "that"})


def _sentences(text: str) -> list[list[tuple[str, bool, int, bool]]]:
    """Words of each sentence as (word, negated, clause number, denied); negation words themselves
    are dropped. Clauses split at "а"/"но"/"однако"/"but"/"whereas"; segments (what a negation
    cannot cross) at commas, colons and dashes.

    A segment is *denied* when it holds a negation (not "без"/"without"), when it follows a denied
    one with "что"/"that" ("не значит, что веса низкоранговые") or after a colon ("не обучается:
    веса внимания"). A segment that is only a negation ("к V — нет") negates and denies the one
    before it. A plain wrong claim in a denied segment is being denied, not made (a claim that is
    itself negative must say so in its phrase: "не уступает fine-tuning")."""
    out: list[list[tuple[str, bool, int, bool]]] = []
    for sentence in _SENTENCE.split(normalize(text).replace("no_grad", "nograd")):  # "no" there is no negation
        words: list[tuple[str, bool, int, bool]] = []
        for ci, clause in enumerate(_CLAUSE.split(f" {sentence} ")):
            denied = False
            after = ""  # the separator before the current segment
            parts = _SEGMENT.split(clause)
            separators = _SEGMENT.findall(clause)
            start = len(words)  # where the previous segment begins
            for k, segment in enumerate(parts):
                seg = _clause_words(segment)
                if not seg:
                    if _has_negation(segment) and len(words) > start:  # "к V — нет"
                        last = len(words) - 1
                        words[last] = (words[last][0], True, ci, True)
                        for j in range(start, last):
                            words[j] = (words[j][0], words[j][1], ci, True)
                    after = separators[k] if k < len(separators) else ""
                    continue
                framed = denied and (seg[0][0] in _FRAMES or after.strip() == ":")
                denied = framed or _has_negation(segment)
                start = len(words)
                words += [(w, neg, ci, denied) for w, neg in seg]
                after = separators[k] if k < len(separators) else ""
        if words:
            out.append(words)
    return out


_DENIALS: Final = NEGATORS - {"без", "without"}  # "без дообучения" is part of a claim, not a denial


def _has_negation(segment: str) -> bool:
    raw = _WORD.findall(segment)
    return any(w in _DENIALS for w in raw) or any(w in _NT_STEMS and nxt == "t" for w, nxt in itertools.pairwise(raw))


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
        # one Word per distinct (keys, negation, polarity): a bank's ~20,000 phrases repeat their
        # words, and each Word holds three sets (~30 MB for the shipped bank without sharing)
        self._words: dict[tuple[frozenset[str], bool, tuple[tuple[str, int], ...]], Word] = {}
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
        return tuple(Word.make(base_keys(w), neg) for sentence in _sentences(text) for w, neg, _, _ in sentence)

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
        for sentence in _sentences(text):
            base = [Token.make(base_keys(w), neg, clause=c, denied=d) for w, neg, c, d in sentence]
            enriched = self._enrich(base)
            out.append([Token.make(k, n, p, t.clause, t.denied) for (k, n, p), t in zip(enriched, base, strict=True)])
        return Text.make(out)

    def phrase(self, text: str) -> Phrase:
        cached = self._phrases.get(text)
        if cached is None:
            plain = self._plain(text)
            cached = tuple(self._word(k, n, p) for k, n, p in self._enrich(plain))
            self._phrases[text] = cached
        return cached

    def _word(self, keys: frozenset[str], neg: bool, polarity: tuple[tuple[str, int], ...]) -> Word:
        word = self._words.get((keys, neg, polarity))
        if word is None:
            word = self._words[(keys, neg, polarity)] = Word.make(keys, neg, polarity)
        return word

    def find(self, phrase_text: str, text: Text, *, clause: bool = False) -> Hit:
        return find(self.phrase(phrase_text), text, clause=clause)

    def best(self, phrases: Iterable[str], text: Text, *, clause: bool = False) -> Hit:
        """MATCH if any phrase matches, else FLIPPED if any matches reversed, else NONE."""
        result = Hit.NONE
        for p in phrases:
            hit = self.find(p, text, clause=clause)
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


def _candidates(word: Word, text: Text) -> set[tuple[int, int]]:
    found: set[tuple[int, int]] = set()
    for k in word.long:
        found.update(text.index.get(k, ()))
    for k in word.short:
        for si, ti in text.index.get(k, ()):
            if k in text.sentences[si][ti].keys:
                found.add((si, ti))
    return found


def find(phrase: Phrase, text: Text, *, clause: bool = False) -> Hit:
    """Whether ``phrase`` occurs in ``text``: its words within ``len + SLACK`` tokens of one
    sentence (of one clause with ``clause=True``, as for wrong claims: "TP режет матрицы, а PP
    делит слои" does not say "PP режет матрицы")."""
    if not phrase:
        return Hit.NONE
    width = len(phrase) + SLACK
    flipped = False
    for si, i in sorted(_candidates(phrase[0], text)):
        sentence = text.sentences[si]
        window = sentence[max(0, i - width + 1) : i + width]
        if clause:
            if sentence[i].denied and not any(w.neg for w in phrase):
                continue  # a plain wrong claim inside a denial ("не значит, что …") is not made
            window = tuple(t for t in window if t.clause == sentence[i].clause)
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
