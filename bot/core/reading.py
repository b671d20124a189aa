"""Reading an answer (or a phrase) into sentences, clauses and segments, each word with its
negation and its frame: asserted, denied, distanced, compared, asked, conditional or quoted
(:mod:`bot.core.frames`). Rules over cue words and pymorphy3's tags; no parser.

A token is *negated* when a negation (не, нет, ни, без, нельзя, not, no, never, without, n't) stands
right before it, or before a particle in front of it ("не всегда хранит" negates "хранит"); a negation
at the end of a segment reaches back ("мёрджить нельзя"); negation never crosses a comma, colon or
dash. "не только" negates "только", so "не только X" is not "только X". Clauses are split at
"а"/"но"/"однако"/"but"/"whereas"; segments at commas, colons and dashes.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from bot.core import frames
from bot.core.frames import Frame
from bot.core.text import CYRILLIC, normalize
from bot.core.wordlists import ENGLISH_FUNCTION, PREPOSITIONS

NEGATORS: Final = frozenset(
    {"не", "нет", "ни", "без", "нельзя", "not", "no", "never", "without", "nor", "cannot"}
    # «никакого приближения» (not «ничего», «никогда»: they come with «не», and reading both lost more than it won)
    | {"никакой", "никакая", "никакое", "никакие", "никакого", "никаких", "никаким", "никакую", "никакому"}
    # "перестаёт считать" = "не считает"
    | {"перестает", "перестают", "перестал", "перестала", "перестали", "прекращает", "прекращают", "stops", "ceases"}
)
_NT_STEMS: Final = frozenset({
    "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "can", "couldn", "shouldn",
    "hasn", "haven", "hadn", "mustn", "needn", "ain",
})  # fmt: skip
# Words a negation reaches across: "не всегда хранит", "is not always stored", "не нужно хранить".
_PASS: Final = frozenset({
    "все", "всегда", "обязательно", "совсем", "сразу", "нужно", "надо", "очень", "так", "вообще",
    "особо", "to", "be", "been", "always", "necessarily", "really", "all", "need", "needed", "very",
    "the", "a", "an", "actually",
})  # fmt: skip
_SENTENCE: Final = re.compile(r"(?<=[.!?;])\s+|\n+")
_PARAGRAPH: Final = re.compile(r"\n\s*\n")
_WORD: Final = re.compile(r"[0-9a-zа-я]+")


_morph: object | None = None


def analyzer() -> object:
    global _morph
    if _morph is None:
        import pymorphy3

        _morph = pymorphy3.MorphAnalyzer()
    return _morph


def is_known_russian(word: str) -> bool:
    """Whether the morphological dictionary knows the (lower-case) word: «кто» yes, «ппо» no."""
    return bool(analyzer().word_is_known(word))  # type: ignore[attr-defined]


# Clauses: parts of a sentence in contrast ("TP режет матрицы, а PP делит слои"); a wrong claim must
# sit in one. Segments: what a negation cannot reach across (commas, dashes, colons).
_CLAUSE: Final = re.compile(r",?\s(а|но|однако|зато|тогда как|whereas|while|but)\s")
_SEGMENT: Final = re.compile(r"[,:]|\s[—–-]\s|—|–")


def _clause_words(segment: str) -> list[tuple[str, bool]]:
    """Words of one segment with their negation flag. A negation reaches the next word (across
    particles: "не всегда хранит"); one at the end of a segment reaches back ("мёрджить нельзя")."""
    return [(w, neg) for w, neg, _ in _negated(segment)]


_SOFT: Final = frozenset({"без", "without"})


def _negated(segment: str) -> list[tuple[str, bool, bool]]:
    """Words of one segment as (word, negated, softly: by «без»/"without" only), see _clause_words."""
    raw = _WORD.findall(segment)
    words: list[tuple[str, bool, bool]] = []
    soft = False
    pending = 0  # how many following words a negation still reaches
    passed: int | None = None  # a particle the negation passed over ("не нужно" at the end)
    i = 0
    while i < len(raw):
        w = raw[i]
        if w in _NT_STEMS and i + 1 < len(raw) and raw[i + 1] == "t":
            pending, passed, soft = 2, None, False
            i += 2
            continue
        if w in NEGATORS:
            pending, passed, soft = 2, None, w in _SOFT
            if i + 1 == len(raw) and words:  # a trailing negation: "хранить нельзя", "needed not"
                words[-1] = (words[-1][0], True, soft)
                pending = 0
            i += 1
            continue
        if pending and w in _PASS:
            pending -= 1
            passed = len(words)
            words.append((w, False, False))
            i += 1
            continue
        words.append((w, pending > 0, pending > 0 and soft))
        pending, passed = 0, None
        i += 1
    if pending and passed is not None:  # "X не нужно": the particle itself is negated
        words[passed] = (words[passed][0], True, soft)
    return words


_FRAMES: Final = frozenset({"что", "чтобы", "будто", "that"})


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of an answer: its text as written and its words as
    (word, negated, clause number, :class:`~bot.core.frames.Frame`)."""

    text: str
    words: list[tuple[str, bool, int, Frame]]
    nominal: list[bool]  # per word: could be a clause's subject (see _subject_like)
    soft: list[bool]  # per word: negated by «без»/"without" only
    segments: list[int]  # per word: its segment (what commas, colons and dashes cut) in the sentence


_ABBREVIATIONS: Final = (
    "п.п.", "т.е.", "т.к.", "т.д.", "т.п.", "др.", "см.", "напр.", "ок.", "тыс.", "млн.", "млрд.", "стр.", "рис.",
    "e.g.", "i.e.", "vs.", "al.", "etc.", "approx.", "cf.",
)  # fmt: skip


def split_sentences(text: str) -> list[str]:
    """The sentences of a text as written (the evidence a charge quotes); a full stop of an
    abbreviation («5 п.п. на 50 задачах», "e.g.") does not end one."""
    out: list[str] = []
    for piece in _SENTENCE.split(text):
        piece = piece.strip() if piece else ""
        if not piece:
            continue
        if out and out[-1].lower().endswith(_ABBREVIATIONS) and not piece.startswith("\n"):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def phrase_words(text: str) -> list[tuple[str, bool]]:
    """Words of a match phrase with their negation flags (no frames: a phrase is not an answer)."""
    out: list[tuple[str, bool]] = []
    for sentence in split_sentences(normalize(text).replace("no_grad", "nograd")):  # as in answers
        for clause in _CLAUSE.split(f" {sentence} ")[::2]:
            for segment in _SEGMENT.split(clause):
                out += _clause_words(segment)
    return out


def _zones(sentence: str) -> list[tuple[str, bool]]:
    """A sentence cut at its quotations: (piece, quoted)."""
    spans = frames.quoted_spans(sentence)
    out: list[tuple[str, bool]] = []
    pos = 0
    for a, b in spans:
        out += [(sentence[pos:a], False), (sentence[a:b], True)]
        pos = b
    out.append((sentence[pos:], False))
    return [(piece, quoted) for piece, quoted in out if piece.strip()]


def read_sentences(text: str) -> list[Sentence]:
    """The sentences of an answer, each word with its negation, its clause and its frame.

    Clauses split at "а"/"но"/"однако"/"but"/"whereas"; segments (what a negation cannot cross)
    at commas, colons and dashes. A segment's frame (:class:`~bot.core.frames.Frame`):

    - *denied* when it holds a negation (not "без"/"without"), when it follows a denied one with
      "что"/"that" ("не значит, что веса низкоранговые") or after a colon ("не обучается: веса
      внимания"); a segment that is only a negation ("к V — нет") negates and denies the one before;
      so are the words a «только если»/"only if" restricts («оптимум гарантирован, только если …»);
    - *distanced* from a belief cue on («часто думают, что …», «миф: …», "it does not mean …") to
      the next contrast («но на самом деле …»); a verdict («…, но это не так», «… — миф», a sentence
      «Это не так.») distances what came before it;
    - *compared* from a comparison cue («в отличие от», «вместо», "instead of") to the next verb or the
      segment's end, and a relative clause right after it («…, где …»);
    - *question* in a sentence that ends with "?" or holds «разве», «ли»;
    - *condition* in a segment with «если», «бы», "if", "would" or opening with «иначе», "otherwise"; and in
      a sentence opening with «(но) тогда», "then" after one that refutes or supposes (what would follow);
    - *quoted* inside a quotation of three words or more, or in a citation ("et al.", "arXiv", "(2021)").

    A plain wrong claim counts only where it is asserted (a claim that is itself negative must say so
    in its phrase: "не уступает fine-tuning")."""
    out: list[Sentence] = []
    previous: list[tuple[str, bool, int, Frame]] | None = None
    warned = False  # under a header of pitfalls («Подводные камни:»), to the paragraph's end
    for paragraph in _PARAGRAPH.split(text):
        warned = False
        for original in split_sentences(paragraph):
            sentence = normalize(original).replace("no_grad", "nograd")  # "no" there is no negation
            raw = _WORD.findall(sentence)
            everything = frozenset(raw)
            question = frames.is_question(sentence)
            reading = _Reading(everything, question)
            ci = -1
            refuting = False  # a refutation goes on past a quotation («ошибочно думать, что «…» значит X»)
            for zone, quoted in _zones(sentence):
                pieces = _CLAUSE.split(f" {zone} ")
                for k in range(0, len(pieces), 2):
                    ci += 1
                    conj = pieces[k - 1] if k else ""
                    refuting = _clause_frames(pieces[k], ci, quoted, reading, conj, carry=refuting and k == 0)
            words, extra = reading.words, reading.extra
            if previous is not None and _then(raw) and any(f in _HYPOTHETICAL for _, _, _, f in previous):
                # «Часто думают, что хватает causal-маски. Но тогда второй документ видит первый…»,
                # «Если не вычитать максимум, … . Тогда exp переполнится»: what would follow, not a claim
                words = [(w, n, c, _worse(f, Frame.CONDITION)) for w, n, c, f in words]
            if warned:
                words = [(w, n, c, _worse(f, Frame.DISTANCED)) for w, n, c, f in words]
            elif _pitfalls_header(original):
                warned = True
            if previous is not None and frames.is_verdict(raw):  # «Это не так.»
                previous[:] = [(w, n, c, Frame.DISTANCED if f in _OWN else f) for w, n, c, f in previous]
            if not words:
                continue
            plain = [w for w, _, _, _ in words]
            nominal = [_subject_like(w) and (j == 0 or plain[j - 1] not in PREPOSITIONS) for j, w in enumerate(plain)]
            out.append(Sentence(original, words, nominal, [e[0] for e in extra], [e[1] for e in extra]))
            previous = words
    return out


_HEAD_END: Final = re.compile(r":|\n|\s[—–-]\s")


def _pitfalls_header(sentence: str) -> bool:
    """«Подводные камни: …», «**Частые ошибки**» over a list, «Типичная ошибка — …», "Pitfalls: …": a head
    of at most four words before a colon, a line break or a dash; what follows to the paragraph's end is
    a list of mistakes. Not «Не стоит путать X и Y: …», whose own sentence warns but whose paragraph goes
    on in the answer's voice."""
    parts = _HEAD_END.split(sentence, maxsplit=1)
    words = _WORD.findall(normalize(parts[0]))
    return len(words) <= 4 and frames.warns(words)  # a head, or a header line of its own


_HYPOTHETICAL: Final = frozenset({Frame.DISTANCED, Frame.CONDITION})


def _then(raw: list[str]) -> bool:
    """A sentence opening with «тогда» / «но тогда» / "then": the consequence of the one before («иначе»,
    "otherwise" open a conditional stretch wherever they stand: :func:`bot.core.frames.conditional`)."""
    head = raw[1:2] if raw[:1] in (["но"], ["и"], ["а"], ["but"]) else raw[:1]
    return head in (["тогда"], ["then"])


_PRONOUNS: Final = frozenset({"я", "мы", "ты", "вы", "он", "она", "оно", "они", "это"})


def _nominative(word: str) -> bool:
    """A Russian word that may be its clause's subject (see :func:`_subject_like`)."""
    return _subject_like(word) or word in _PRONOUNS


@lru_cache(maxsize=50_000)
def _subject_like(word: str) -> bool:
    """Whether a word could be the subject of its clause: a Russian noun that can be nominative (not a
    pronoun: «мы», «она», «это» refer to what the answer is about), or an English or Latin term."""
    if CYRILLIC.search(word):
        if len(word) < 3:
            return False
        parses = analyzer().parse(word)  # type: ignore[attr-defined]
        return any(p.tag.POS == "NOUN" and p.tag.case == "nomn" and p.score >= 0.1 for p in parses[:3])
    return len(word) > 2 and not word.isdigit() and word not in ENGLISH_FUNCTION


@dataclass(slots=True)
class _Reading:
    """A sentence being read: all its words, whether it asks, and so far each word with its negation,
    clause and frame (``words``) and whether it is softly negated and its segment number (``extra``)."""

    everything: frozenset[str]
    question: bool
    words: list[tuple[str, bool, int, Frame]] = field(default_factory=list)
    extra: list[tuple[bool, int]] = field(default_factory=list)


def _clause_frames(clause: str, ci: int, quoted: bool, r: _Reading, conj: str = "", *, carry: bool = False) -> bool:
    """Append the words of one clause to ``r`` with their frames (see :func:`read_sentences`).
    ``conj``: the conjunction before the clause; ``carry``: a refutation open before a quotation goes
    on. Returns whether a refutation is open at its end."""
    words = r.words
    denied = False
    # a clause begins at a contrast ("но", "but"): the answer's own view; one after «а» goes on with a
    # refuted belief («ошибочно считать, что X, а Y …») unless it turns («а на самом деле …»)
    goes_on = carry or (conj == "а" and bool(words) and words[-1][3] is Frame.DISTANCED)
    refuting = goes_on and not frames.resets(_WORD.findall(clause)[:4])
    compared_before = False
    after = ""  # the separator before the current segment
    parts = _SEGMENT.split(clause)
    separators = _SEGMENT.findall(clause)
    start = len(words)  # where the previous segment begins
    segment_no = r.extra[-1][1] + 1 if r.extra else 0
    for k, segment in enumerate(parts):
        raw = _WORD.findall(segment)
        seg = _negated(segment)
        sep_after = separators[k] if k < len(separators) else ""
        if frames.only_if_at(raw) == 0:  # «X, только если Y»: X is restricted
            _deny_from(words, start, len(words))
        if not seg:
            if _has_negation(segment) and len(words) > start:  # "к V — нет"
                _deny_back(words, start, ci)
        elif frames.is_verdict(raw):  # «…, но это не так», «… — миф»: what came before is refuted
            refuting = refuting or not words  # «Миф: X», «Неверно, что X»: what follows is
            _distance(words, 0)
        else:
            if refuting and frames.resets(raw):
                refuting = False
            framed = denied and (seg[0][0] in _FRAMES or after.strip() == ":")
            denied = framed or _has_negation(segment)
            frame = Frame.DISTANCED if refuting else Frame.DENIED if denied else Frame.ASSERTED
            # inside a refuted belief, a negation is part of it («…, что X не нужен»)
            refuting = refuting or frames.opens_refutation(raw, r.everything, _nominative)
            frame = _segment_frame(segment, raw, frame, quoted=quoted or frames.cites(segment), question=r.question,
                                   compared_before=compared_before)  # fmt: skip
            start = len(words)
            plain = [w for w, _, _ in seg]
            compared_before = _append(r, seg, frame, ci, segment_no)
            if not _joins(sep_after, raw, parts[k + 1] if k + 1 < len(parts) else ""):
                segment_no += 1
            if refuting and frames.opens_refutation(raw, r.everything, _nominative):  # «миф: X», "a myth that X": X on
                opened = next((i for i, w in enumerate(plain) if w in _REFUTE_CUES), None)
                if opened is not None:
                    _distance(words, start + opened + 1)
        after = sep_after
    return refuting


def _segment_frame(
    segment: str, raw: list[str], frame: Frame, *, quoted: bool, question: bool, compared_before: bool
) -> Frame:
    """The frame of a segment, from its own cue words on top of ``frame`` (asserted, denied or refuted)."""
    if compared_before and frames.relative(raw):
        frame = Frame.COMPARED
    if frames.conditional(raw):
        frame = _worse(frame, Frame.CONDITION)
    if question or frames.asks(raw):
        frame = Frame.QUESTION
    if quoted:
        frame = Frame.QUOTED
    return frame


def _append(r: _Reading, seg: list[tuple[str, bool, bool]], frame: Frame, ci: int, segment_no: int) -> bool:
    """Append a segment's words in ``frame``; from a comparison cue («в отличие от X») to the next
    verb they are compared. Returns whether the comparison is still open at the segment's end."""
    plain = [w for w, _, _ in seg]
    cue = frames.compares_from(plain)
    compared = cue is not None
    restricted = frames.only_if_at(plain) or 0
    for i, (w, neg, soft) in enumerate(seg):
        # before «только если»: no plain claim, but the subject of one that the restriction makes
        # («FSDP работает, только если модель помещается на одну GPU»), as in a denied segment
        f = frame if i >= restricted else _worse(frame, Frame.DENIED)
        if cue is not None and i >= cue:
            if i > cue + 1 and _is_finite_verb(w):
                cue = None  # the comparison's phrase ends at the verb
                compared = False
            else:
                f = _worse(f, Frame.COMPARED)
        r.words.append((w, neg, ci, f))
        r.extra.append((soft, segment_no))
    return compared


def _deny_back(words: list[tuple[str, bool, int, Frame]], start: int, ci: int) -> None:
    """A segment that is only a negation («к V — нет») negates the word before it and denies its segment."""
    last = len(words) - 1
    words[last] = (words[last][0], True, ci, Frame.DENIED)
    _deny_from(words, start, last)


def _deny_from(words: list[tuple[str, bool, int, Frame]], start: int, end: int) -> None:
    """Words ``start`` to ``end`` (exclusive) read as in a denied segment, unless further from the answer's voice."""
    for j in range(start, end):
        words[j] = (words[j][0], words[j][1], words[j][2], _worse(words[j][3], Frame.DENIED))


def _distance(words: list[tuple[str, bool, int, Frame]], start: int) -> None:
    """The answer's own words from ``start`` on become a belief it refutes."""
    for j in range(start, len(words)):
        if words[j][3] in _OWN:
            words[j] = (words[j][0], words[j][1], words[j][2], Frame.DISTANCED)


def _joins(separator: str, before: list[str], after: str) -> bool:
    """Whether a dash or a colon joins a subject to its predicate («Circuit breaker — повтор запроса»,
    «X — это Y», «Ошибка значит: …»), so a claim may span it; a comma never does, nor a dash between
    two clauses («увеличивает ошибку на train — она уменьшает разрыв»)."""
    if separator.strip() == "," or not separator.strip():
        return False
    nxt = _WORD.findall(after)[:1]
    return len(before) <= 3 or nxt in (["это"], ["this"], ["that"], ["значит"], ["means"])


_OWN: Final = frozenset({Frame.ASSERTED, Frame.DENIED})  # what a refutation takes over («X не нужен — миф»)

_REFUTE_CUES: Final = frozenset(
    [
        "думают",
        "считают",
        "полагают",
        "верят",
        "кажется",
        "миф",
        "заблуждение",
        "ошибочно",
        "соблазнительно",
        "заманчиво",
        "соблазн",
        "инстинкт",
        "tempting",
        "temptation",
        "instinct",
        "якобы",
        "будто",
        "значит",
        "означает",
        # others' practice and its verdicts: «многие переносят …», «часто смотрят на …», «неправильно считать …»
        "многие",
        "некоторые",
        "часто",
        "неправильно",
        "некорректно",
        "неверно",
        "ждут",
        "ожидают",
        "слышу",
        "слышал",
        "называют",
        "причисляют",
        "относят",
        "think",
        "believe",
        "myth",
        "misconception",
        "mean",
        "means",
    ]
)


def _worse(a: Frame, b: Frame) -> Frame:
    """The frame further from the answer's own voice (asserted < denied < the rest)."""
    return a if a >= b else b


@lru_cache(maxsize=50_000)
def _is_finite_verb(word: str) -> bool:
    """A finite verb (Russian, by pymorphy3; English by a few common forms): where a compared phrase
    ends («вместо отдельной модели Medusa *использует* головы»; «вместо того чтобы прибавлять» goes on)."""
    if CYRILLIC.search(word):
        parses = analyzer().parse(word)  # type: ignore[attr-defined]
        return bool(parses) and parses[0].tag.POS == "VERB"
    return word in {"is", "are", "uses", "use", "adds", "add", "has", "have", "does", "do", "makes", "keeps"}


_DENIALS: Final = NEGATORS - {"без", "without"}  # "без дообучения" is part of a claim, not a denial


def _has_negation(segment: str) -> bool:
    raw = _WORD.findall(segment)
    return any(w in _DENIALS for w in raw) or any(w in _NT_STEMS and nxt == "t" for w, nxt in itertools.pairwise(raw))
