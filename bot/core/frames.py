"""Whose voice a stretch of an answer is in: the *frame* of each segment of a sentence.

A wrong claim counts against an answer only where the answer **asserts** it. The same words are not
asserted when the answer refutes them («часто думают, что X, но…», «X — миф», "it does not mean X"),
describes what is being compared («в отличие от X, где…», "instead of X"), asks («разве X?»),
imagines («если бы X», "if X were"), or cites («в статье "X"», "(Author et al., 2020)").

The reading is by rules over the words of a segment (the part of a sentence between commas, colons
and dashes), the sentence's punctuation and a small vocabulary of cue words in Russian and English.
It needs no parser: a dependency parser with its vocabulary costs ~160 MB of memory and ~0.5 s of
start-up (``shared/reference/russian-nlp-facts.md``), while these frames are marked by a closed set
of words that a rule finds as well. What a rule cannot decide (who the subject of a clause is) the
grader does not guess: it asks instead of charging (:mod:`bot.core.grading`).
"""

from __future__ import annotations

import enum
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Final

from bot.core.text import CYRILLIC


class Frame(enum.IntEnum):
    ASSERTED = 0  # the answer's own claim
    DENIED = 1  # inside a negated segment ("не значит, что …")
    DISTANCED = 2  # a belief the answer names to refute it ("часто думают, что …", "… — миф")
    COMPARED = 3  # the alternative or baseline being compared ("в отличие от …", "instead of …")
    QUESTION = 4  # asked, not said
    CONDITION = 5  # a condition or counterfactual ("если бы …", "if … were")
    QUOTED = 6  # a quotation or a cited title


# Verbs of belief whose plural or impersonal form names somebody else's view («часто думают, что»).
_BELIEF: Final = frozenset(
    [
        "думают",
        "думает",
        "считают",
        "полагают",
        "верят",
        "кажется",
        "казаться",
        "показаться",
        "покажется",
        "кажущееся",
        "принято",
        "думал",
        "думала",
        "думали",
        "считал",
        "считала",
        "считали",
        "полагал",
        "полагала",
        "полагали",
        "верил",
        "верила",
        "верили",
        "мнение",
        "представление",
        "представления",
        "ожидал",
        "ожидала",
        "ожидали",
        "thought",
        "believed",
        "assumed",
        "говорят",
        "утверждают",
        "пишут",
        "уверены",
        "представляют",
        "ожидают",
        "ждут",
        "предполагают",
        "интуиция",
        "интуитивно",
        "think",
        "thinks",
        "believe",
        "believes",
        "assume",
        "assumes",
        "expect",
        "expects",
        "claim",
        "claims",
        "say",
        "says",
        "suppose",
        # naming or explaining with «многие»/«часто»: «часто X называют …», «многие объясняют это тем, что …»
        "называют",
        "объясняют",
        "причисляют",
        "относят",
        "слышу",
        "слышал",
        "слышала",
        "слышали",
        "call",
        "explain",
    ]
)
# Words that say outright that a belief is wrong: a refutation opens at them.
_STRONG: Final = frozenset({
    "миф", "мифа", "мифом", "мифы", "неправильно", "некорректно", "заблуждение", "заблуждения",
    "заблуждением", "ошибочно", "ошибочное", "ошибочная", "ошибочный", "неверно", "неправда", "путаница",
    "misconception", "misconceptions", "myth", "myths", "mistakenly", "wrongly",
})  # fmt: skip
# Words that make a belief somebody's mistake (with a belief verb: «часто думают, что …»).
_WRONG: Final = _STRONG | frozenset(
    [
        "common",
        "commonly",
        "false",
        "many",
        "mistake",
        "mistaken",
        "naive",
        "naively",
        "often",
        "popular",
        "some",
        "tempting",
        "untrue",
        "used",
        "wrong",
        "будто",
        "иллюзия",
        "иногда",
        "многие",
        "наивная",
        "наивно",
        "наивный",
        "неверная",
        "неверное",
        "неверный",
        "некоторые",
        "неправильно",
        "неправильное",
        "новички",
        "ошибка",
        "ошибкой",
        "ошибку",
        "путаницу",
        "путать",
        "путают",
        "раньше",
        "распространенная",
        "распространенное",
        "распространенный",
        "распространено",
        "часто",
        "якобы",
    ]
)
# The words of a verdict on what came before: «…, но это не так», «… — миф», "that's wrong".
_VERDICT_CORE: Final = frozenset(
    [
        "неверно",
        "неправда",
        "миф",
        "заблуждение",
        "ошибка",
        "ошибочно",
        "неправильно",
        "путаница",
        "wrong",
        "false",
        "myth",
        "misconception",
        "incorrect",
    ]
)
# A segment made only of these is a verdict (the verdict words, and the words around them).
_VERDICT: Final = _VERDICT_CORE | frozenset(
    [
        "a",
        "is",
        "not",
        "s",
        "that",
        "this",
        "true",
        "вовсе",
        "не",
        "нет",
        "совсем",
        "так",
        "это",
    ]
)
# "не значит, что" / "doesn't mean": a denial of what follows.
_IMPLY: Final = frozenset(
    [
        "значит",
        "означает",
        "означают",
        "следует",
        "говорит",
        "подразумевает",
        "стоит",
        "нужно",
        "надо",
        "правда",
        "верно",
        "mean",
        "means",
        "imply",
        "implies",
        "follow",
        "follows",
        "true",
    ]
)
# What resets a refutation: the answer's own view follows.
_RESET: Final = frozenset(
    [
        "но",
        "однако",
        "а",
        "зато",
        "наоборот",
        "самом",
        "деле",
        "деле",
        "действительности",
        "реальности",
        "фактически",
        "but",
        "however",
        "actually",
        "fact",
        "reality",
        "instead",
        "rather",
        "whereas",
    ]
)
_COMPARE_ONE: Final = frozenset(["вместо", "unlike", "versus", "vs"])
_COMPARE_TWO: Final = frozenset(
    [
        ("в", "отличие"),
        ("по", "сравнению"),
        ("в", "сравнении"),
        ("в", "противовес"),
        ("instead", "of"),
        ("rather", "than"),
        ("compared", "to"),
        ("compared", "with"),
        ("as", "opposed"),
        ("in", "contrast"),
        ("contrary", "to"),
    ]
)
_RELATIVE: Final = frozenset(
    [
        "где",
        "куда",
        "откуда",
        "который",
        "которая",
        "которое",
        "которые",
        "которого",
        "которой",
        "которому",
        "которым",
        "которых",
        "которую",
        "котором",
        "where",
        "which",
        "who",
        "whose",
        "whom",
    ]
)
_IF: Final = frozenset(["если", "бы", "будь", "were", "would", "unless", "if"])
_QUESTION_WORDS: Final = frozenset(["разве", "неужели", "ли", "whether"])
_CITE: Final = re.compile(r"\bet al\b|arxiv|\(\s*\d{4}\s*\)|,\s*(?:19|20)\d\d\s*\)")
_QUOTE: Final = re.compile(r"[«\"“„]([^«»\"“”„]{12,}?)[»\"”]")
_WORD: Final = re.compile(r"[0-9a-zа-я]+")


def quoted_spans(sentence: str) -> list[tuple[int, int]]:
    """Character spans of quotations of three words or more (short scare quotes like «в разы» are
    the answer's own words)."""
    return [m.span(1) for m in _QUOTE.finditer(sentence) if len(_WORD.findall(m.group(1))) >= 3]


def is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def is_verdict(raw: Sequence[str]) -> bool:
    """«это не так», «неверно», «миф», "that's wrong": the segment only judges what came before."""
    if not raw or len(raw) > 5 or not all(w in _VERDICT for w in raw):
        return False
    return any(w in _VERDICT_CORE for w in raw) or ("не" in raw and "так" in raw) or ("not" in raw and "true" in raw)


def _bigrams(raw: Sequence[str]) -> set[tuple[str, str]]:
    return set(itertools.pairwise(raw))


def compares_from(raw: Sequence[str]) -> int | None:
    """Where a comparison cue begins in a segment («в отличие от», "instead of"), if any."""
    for i, w in enumerate(raw):
        if w in _COMPARE_ONE:
            return i
        if i + 1 < len(raw) and (w, raw[i + 1]) in _COMPARE_TWO:
            return i
    return None


_WEAK: Final = frozenset(["ошибка", "ошибкой", "ошибку", "неправильно", "wrong", "false", "incorrect", "mistake"])
_QUALIFIERS: Final = frozenset(
    [
        "типичная",
        "частая",
        "распространенная",
        "распространённая",
        "главная",
        "классическая",
        "популярная",
        "новичковая",
        "часто",
        "многие",
        "нередко",
        "common",
        "typical",
        "classic",
        "popular",
        "frequent",
    ]
)


def opens_refutation(
    raw: Sequence[str], sentence_words: frozenset[str], nominative: Callable[[str], bool] | None = None
) -> bool:
    """Whether a segment opens somebody else's belief that the answer goes on to refute or deny
    (``nominative``: whether a Russian word may be a subject, for :func:`_others_practice`)."""
    if _others_practice(raw, nominative):
        return True
    if any(w in _BELIEF for w in raw) and (
        sentence_words & _WRONG
        or any(w in {"думают", "полагают", "верят", "think", "believe", "мнение"} for w in raw)
        or _believes(raw)
    ):
        return True
    if _STRONG & set(raw):  # «миф, что …», «ошибочно считать», «заблуждение — …»
        return True
    if _WEAK & set(raw) and (len(raw) <= 3 or _QUALIFIERS & set(raw)):  # «Ошибка: …», «частая ошибка — …»
        return True  # not «ошибка на train», «strict=False»
    if {"misconception", "myth"} & set(raw) or {"ошибочно", "наивно", "якобы", "будто"} & set(raw):
        return True
    if {"соблазнительно", "заманчиво", "соблазн", "инстинкт", "tempting", "temptation", "instinct"} & set(raw[:3]):
        # «Соблазнительно X, но …», «Инстинкт инженера — X, но …»: set against
        return True
    if warns(raw):  # «подводные камни: …», «типичная ошибка — …», "pitfall: …"
        return True
    negated_imply = any(
        a in {"не", "not", "doesn", "does", "t"} and b in _IMPLY for a, b in _bigrams(raw)
    )  # «не значит», «не означает», "doesn't mean", "not true"
    return negated_imply


_OTHERS: Final = frozenset({"многие", "некоторые"})
_PLURAL_ENDINGS: Final = ("ют", "ят", "ут", "ат")


def _others_practice(raw: Sequence[str], nominative: Callable[[str], bool] | None = None) -> bool:
    """«Многие переносят learning rate из полного fine-tuning…», «Часто смотрят на GPU utilization…»:
    what others do, told to be set against (to the next contrast), not the answer's own claim."""
    if raw and raw[0] in _OTHERS:
        return True
    if len(raw) < 2 or raw[0] != "часто":
        return False
    # «часто смотрят …», «часто warmup и total задают …», «часто в таких системах главной метрикой
    # берут …»: a plural verb with no subject of its own before it; a Russian word that may be a
    # subject stops it («часто модели ошибаются» is a claim), and any Russian word does when the
    # caller cannot tell
    for w in raw[1:8]:
        russian = bool(CYRILLIC.search(w)) and w != "и"
        if russian and nominative is not None and nominative(w):  # «часто результат …» is a claim
            return False
        if w.endswith(_PLURAL_ENDINGS) and len(w) > 4:
            return True
        if russian and nominative is None:
            return False
    return False


def _believes(raw: Sequence[str]) -> bool:
    """«считают, что …», «считают: …» — a belief; not «loss считают по всей последовательности»,
    where «считают» is «compute» (the segment goes on with what is computed)."""
    for i, w in enumerate(raw):
        if w == "считают":
            return i == len(raw) - 1 or raw[i + 1] == "что"
    return False


_WARN: Final = frozenset(
    [
        "подводные",
        "антипаттерн",
        "антипаттерны",
        "путать",
        "путают",
        "pitfall",
        "pitfalls",
        "antipattern",
        "avoid",
        "gotcha",
        "gotchas",
        "trap",
        "traps",
        "ловушка",
        "ловушки",
        "грабли",
        "типичная",
        "типичные",
        "частая",
        "частые",
    ]
)


def warns(raw: Sequence[str]) -> bool:
    """A warning about mistakes: «подводные камни», «типичная ошибка», «путать X с Y», "pitfalls"."""
    return bool(_WARN & set(raw)) and (
        "камни" in raw
        or "ошибка" in raw
        or "ошибки" in raw
        or bool(set(raw) - {"типичная", "типичные", "частая", "частые"} & _WARN)
    )


def resets(raw: Sequence[str]) -> bool:
    """A refutation ends where the answer's own view begins («но на самом деле», "but actually")."""
    return bool(raw) and (raw[0] in _RESET or bool(_RESET & set(raw[:3]) & {"самом", "деле", "actually", "fact"}))


def conditional(raw: Sequence[str]) -> bool:
    """«если бы …», «… росла бы», «будь у модели …», "if it were …", "would"; a plain «если …» too
    (also «потому что если …»): a condition is not a claim."""
    if not raw:
        return False
    for i, w in enumerate(raw[:3]):
        if w in {"если", "if", "unless"}:  # «только если …», "only if …" state the condition as a claim
            return i == 0 or raw[i - 1] not in _ONLY
    if raw[0] == "будь":
        return True
    if raw[0] in {"иначе", "otherwise"} and raw[1:2] != ["говоря"]:  # «…, иначе каждый ранк клипает по своей норме»
        return True  # what happens if not (not «иначе говоря», "in other words")
    # «росла бы», "it would be"; not the candidate's own «я бы проверял …», "I would …"
    return any(w in {"бы", "would", "were"} and (i == 0 or raw[i - 1] not in _SPEAKER) for i, w in enumerate(raw))


_SPEAKER: Final = frozenset({"я", "мы", "i", "we"})
_ONLY: Final = frozenset({"только", "лишь", "only"})
_ONLY_IF: Final = frozenset({"если", "if"})


def only_if_at(raw: Sequence[str]) -> int | None:
    """Where «только если»/«лишь если»/"only if" stands in a segment, if it does: what comes before it
    (in the segment, or in the one before when it opens one) is restricted, not claimed as such —
    «оптимум гарантирован только если луч шире…» is not «гарантирует оптимум»."""
    return next((i for i in range(len(raw) - 1) if raw[i] in _ONLY and raw[i + 1] in _ONLY_IF), None)


def relative(raw: Sequence[str]) -> bool:
    """A relative clause («где …», «который …», "where …") attached to the phrase before it."""
    return bool(raw) and (raw[0] in _RELATIVE or (len(raw) > 1 and raw[1] in _RELATIVE))


def asks(raw: Sequence[str]) -> bool:
    return any(w in _QUESTION_WORDS for w in raw)


def cites(segment: str) -> bool:
    return bool(_CITE.search(segment))
