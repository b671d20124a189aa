"""Quiz polls from the glossary: pure generation, no Telegram.

Two kinds of quiz:

- ``definition``: the (shortened, masked) definition of a term; which term is it? The options are
  the right term and three distractors;
- ``term``: a term; which definition is its? Only when the right term and three distractors all
  have a short definition that fits an option (the first sentence, or its first clause).

Distractors are other terms linked to questions of the same topic, then of the nearest topics
(ranked by how many terms they share with it). A term is never a distractor when it and the right
term name each other (e.g. "RoPE" is a kind of "positional encoding"), so exactly one option is
right. Everything respects Telegram's poll limits (measured in UTF-16 code units, which is never
less than the number of characters): question ≤ 300, option ≤ 100, explanation ≤ 200 with at
most two line feeds. Generation is deterministic for a given :class:`random.Random` state.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from bot.bank.markdown import to_plain
from bot.bank.model import Bank, Term
from bot.core.picking import pick
from bot.core.text import PREFIX_MIN, word_key
from bot.i18n import t

QuizKind = Literal["definition", "term"]

QUESTION_LIMIT: Final = 300
OPTION_LIMIT: Final = 100
EXPLANATION_LIMIT: Final = 200
EXPLANATION_LINE_FEEDS: Final = 2
OPTIONS: Final = 4
MASK: Final = "___"
ELLIPSIS: Final = "…"
# a short definition (an option of a reverse quiz) has at least this many characters
_MIN_SHORT: Final = 25
# the chance of a reverse quiz when one is possible and no kind was asked for
_REVERSE_SHARE: Final = 1 / 3

_WORD = re.compile(r"[0-9A-Za-zА-Яа-яЁё]+")
# a sentence ends with . ! ? … followed by a space and something that starts a sentence
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[A-ZА-ЯЁ«(\"0-9])")
_CLAUSE_END = re.compile(r"\s*[:;]\s")
_TRAILING = " ,;:—–-(«\"'"
_PAIRS: Final = (("(", ")"), ("«", "»"), ("[", "]"), ("`", "`"))
# a cut text does not end on a word that leads into the next one ("…задержка и…")
_JOINER = re.compile(r"\s*[(/,]\s*")
_CLOSING = re.compile(r"\s*\)")
_DANGLING: Final = frozenset(
    {"и", "или", "а", "но", "в", "во", "на", "с", "со", "к", "ко", "по", "о", "об", "от", "до", "для",
     "из", "за", "при", "без", "что", "как", "the", "a", "an", "and", "or", "of", "to", "in", "on",
     "for", "with", "by", "as"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Quiz:
    """One quiz poll, ready to send."""

    term_id: str
    kind: QuizKind
    topic: str | None  # the topic the distractors came from (None: the term has no questions)
    question: str
    options: tuple[str, ...]
    correct_option: int
    explanation: str
    option_terms: tuple[str, ...]  # the term id behind each option, in option order


def tg_len(text: str) -> int:
    """Length as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


# -- text helpers --------------------------------------------------------------------------------


def _key(word: str) -> str:
    return word_key(word.lower().replace("ё", "е"))


def _name_keys(names: Iterable[str]) -> list[list[str]]:
    out = []
    for name in names:
        ks = [_key(w) for w in _WORD.findall(name)]
        if ks:
            out.append(ks)
    return out


def _same_word(name_key: str, text_key: str) -> bool:
    """A word of a name meets a word of the text: equal keys, or the text word is longer (an
    inflection: "checkpoint" ~ "checkpointing"), or a little shorter. Unlike search, a short text
    word is not a prefix of a long name word ("батча" is not "батчнорм")."""
    if name_key == text_key:
        return True
    if len(name_key) >= PREFIX_MIN and text_key.startswith(name_key):
        return True
    return len(text_key) >= PREFIX_MIN and name_key.startswith(text_key) and len(name_key) - len(text_key) <= 2


@lru_cache(maxsize=4096)
def _tokens(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((m.start(), m.end(), _key(m.group())) for m in _WORD.finditer(text))


@lru_cache(maxsize=4096)
def _starts(text: str) -> frozenset[str]:
    return frozenset(key[:2] for _, _, key in _tokens(text))


def _spans(text: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of ``text`` where one of ``names`` occurs, word by word with inflections
    ("контрольную точку" ~ "контрольная точка", "чекпоинтов" ~ "checkpoints")."""
    tokens = _tokens(text)
    starts = _starts(text)
    spans = []
    for ks in _name_keys(names):
        if ks[0][:2] not in starts:  # words that meet share their first two letters (see _same_word)
            continue
        n = len(ks)
        for i in range(len(tokens) - n + 1):
            if all(_same_word(ks[j], tokens[i + j][2]) for j in range(n)):
                spans.append((tokens[i][0], tokens[i + n - 1][1]))
    return spans


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` names any of ``names`` (inflections and transliteration count)."""
    return _mentions(text, tuple(names))


@lru_cache(maxsize=65536)
def _mentions(text: str, names: tuple[str, ...]) -> bool:
    # a quiz weighs every candidate distractor against the term (both ways): the bank is fixed,
    # so each pair is worked out once
    return bool(_spans(text, names))


def _mask_spans(text: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """The spans a quiz masks (:func:`_shorten`): every name, grown to the whole hyphenated token
    ("KV-кэш", "LoRA-адаптер"), with "___ (___)" and "___/___" merged into one."""
    merged: list[list[int]] = []
    for start, end in sorted(_spans(text, names)):
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "-_'’"):
            start -= 1
        while end < len(text) and (text[end].isalnum() or text[end] in "-_'’"):
            end += 1
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            continue
        gap = text[merged[-1][1] : start] if merged else ""
        if merged and _JOINER.fullmatch(gap):
            # "___ (___)" becomes one mask only with its closing bracket: "___ (___, GCS)" stays
            closing = _CLOSING.match(text, end) if "(" in gap else None
            if "(" not in gap or closing:
                merged[-1][1] = closing.end() if closing else end
                continue
        merged.append([start, end])
    return [(start, end) for start, end in merged]


def _apply(text: str, spans: Sequence[tuple[int, int]], mask: str = MASK) -> str:
    out, pos = [], 0
    for start, end in spans:
        out.append(text[pos:start])
        out.append(mask)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def _balanced(text: str) -> bool:
    for left, right in _PAIRS:
        if left == right:
            if text.count(left) % 2:
                return False
        elif text.count(left) != text.count(right):
            return False
    return True


def _tidy(head: str, limit: int) -> str:
    """A cut-off head made presentable: no trailing punctuation, no dangling "и"/"of", no
    unclosed bracket (when cutting before it keeps at least half of ``limit``)."""
    cut = head.rstrip(_TRAILING)
    while " " in cut and cut.rsplit(" ", 1)[1].lower() in _DANGLING:
        cut = cut.rsplit(" ", 1)[0].rstrip(_TRAILING)
    for left, right in _PAIRS:
        if left != right and cut.count(left) > cut.count(right):
            before = cut[: cut.rfind(left)].rstrip(_TRAILING)
            if tg_len(before) >= limit // 2:
                cut = before
    return cut


def _shorten(text: str, limit: int, names: Iterable[str] = ()) -> tuple[str, str]:
    """``text`` with ``names`` masked, cut to fit ``limit``: after whole sentences when they keep
    at least a third of the room, else at a word boundary with "…". Returns what is shown and the
    (unmasked) rest that is not."""
    text = " ".join(text.split())
    spans = _mask_spans(text, names)

    def shown(end: int) -> str | None:
        """The masked head ``text[:end]``; None if ``end`` falls inside a masked name."""
        if any(start < end < stop for start, stop in spans):
            return None
        return _apply(text[:end], [sp for sp in spans if sp[1] <= end])

    whole = shown(len(text)) or ""
    if tg_len(whole) <= limit:
        return whole, ""
    kept: tuple[str, str] | None = None
    for m in _SENTENCE_END.finditer(text):
        head = shown(m.start())
        if head is None:
            continue
        if tg_len(head) > limit:
            break
        if _balanced(head):  # «(в т. ч. SMOTE)» is no sentence end
            kept = (head, text[m.end() :])
    if kept is not None and tg_len(kept[0]) >= limit // 3:
        return kept
    best = ("", text)
    for m in re.finditer(r"\s", text):
        end = len(_tidy(text[: m.start()], limit))
        head = shown(end)
        if head is None or not head:
            continue
        if tg_len(head) + tg_len(ELLIPSIS) > limit:
            break
        best = (head + ELLIPSIS, ELLIPSIS + text[end:].lstrip(_TRAILING))
    if not best[0]:  # one enormous word: cut it anywhere
        head = whole[: limit - tg_len(ELLIPSIS)]
        while tg_len(head) > limit - tg_len(ELLIPSIS):
            head = head[:-1]
        best = (head + ELLIPSIS, "")
    return best


def fit(text: str, limit: int) -> str:
    """``text`` unchanged if it fits ``limit``, else cut after whole sentences (when they keep at
    least a third of the room), else at a word boundary with "…"."""
    return _shorten(text, limit)[0]


def _continuation(rest: str) -> str:
    """What the explanation adds after a definition the question cut: whole sentences only. A rest
    that starts mid-sentence («…») loses that fragment: the explanation never opens with a cut."""
    if not rest.startswith(ELLIPSIS):
        return rest
    return " ".join(sentences(rest[len(ELLIPSIS) :])[1:])


def _explanation(label: str, rest: str, more: str) -> str:
    """Three lines (two line feeds) within the explanation limit: the right term, the rest of the
    definition (cut to fit) and where to read more."""
    head = fit(f"✅ {label}", EXPLANATION_LIMIT)
    room = EXPLANATION_LIMIT - tg_len(head) - tg_len(more) - 2
    middle = fit(rest, room) if rest and room >= 40 else ""
    lines = [head, middle, more] if tg_len(head) + tg_len(more) + 1 <= EXPLANATION_LIMIT else [head]
    return "\n".join(line for line in lines if line)


# -- the glossary's shape ------------------------------------------------------------------------


def term_topics(bank: Bank, term: Term) -> list[str]:
    """The topics of the questions a term is linked to, most links first (ties in bank order)."""
    order = {topic.id: i for i, topic in enumerate(bank.topics)}
    counts = Counter(q.topic for qid in term.questions if (q := bank.question(qid)) is not None)
    return sorted(counts, key=lambda tid: (-counts[tid], order.get(tid, len(order))))


def terms_by_topic(bank: Bank) -> dict[str, list[str]]:
    """Per topic, the ids of the terms linked to its questions, in bank order (one pass over the terms)."""
    out: dict[str, list[str]] = {tp.id: [] for tp in bank.topics}
    for term in bank.terms.values():
        for topic in {q.topic for qid in term.questions if (q := bank.question(qid)) is not None}:
            out.setdefault(topic, []).append(term.id)
    return out


def topic_terms(bank: Bank, topic: str) -> list[str]:
    """Ids of the terms linked to questions of ``topic``, in bank order."""
    return terms_by_topic(bank).get(topic, [])


def nearest_topics(bank: Bank, topic: str, by_topic: dict[str, list[str]] | None = None) -> list[str]:
    """Every other topic, nearest first: most terms shared with ``topic``, then closest in order
    (``by_topic``: :func:`terms_by_topic`, when the caller has it)."""
    by_topic = terms_by_topic(bank) if by_topic is None else by_topic
    order = {tp.id: i for i, tp in enumerate(bank.topics)}
    mine = set(by_topic.get(topic, ()))
    others = [tp.id for tp in bank.topics if tp.id != topic]
    here = order.get(topic, 0)
    return sorted(others, key=lambda tid: (-len(mine.intersection(by_topic.get(tid, ()))), abs(order[tid] - here)))


def option_label(term: Term, lang: str) -> str:
    """An option naming a term: both names in Russian, as in "Чекпоинты (Checkpoints)", when they
    differ and fit; else the name in ``lang``."""
    name = term.name(lang)
    plain = "(" not in term.term_ru + term.term_en
    if lang != "en" and plain and term.term_ru and term.term_en and term.term_ru.casefold() != term.term_en.casefold():
        both = f"{term.term_ru} ({term.term_en})"
        if tg_len(both) <= OPTION_LIMIT:
            return both
    return fit(name, OPTION_LIMIT)


def plain_definition(term: Term) -> str:
    """The definition as a poll shows it: polls take no Markdown (`code`, **bold** would show as is)."""
    return " ".join(to_plain(term.definition).split())


def _short_and_rest(term: Term) -> tuple[str, str] | None:
    parts = sentences(plain_definition(term))
    if not parts:
        return None
    first, rest = parts[0], " ".join(parts[1:])
    candidates = [(first, rest)]
    clause = _CLAUSE_END.split(first, maxsplit=1)
    if len(clause) == 2:
        candidates.append((clause[0].rstrip(_TRAILING), f"{ELLIPSIS}{clause[1]} {rest}".strip()))
    for candidate, after in candidates:
        # an option with the term masked out reads as a riddle ("___ в PyTorch"): not used
        if mentions(candidate, term.names):
            continue
        if tg_len(candidate) <= OPTION_LIMIT and len(candidate) >= _MIN_SHORT and _balanced(candidate):
            return candidate, after
    return None


def short_definition(term: Term) -> str | None:
    """The definition's first sentence (or its first clause) if it fits a poll option, says
    something and does not name the term itself; else ``None``."""
    found = _short_and_rest(term)
    return found[0] if found else None


def related(a: Term, b: Term) -> bool:
    """Whether one term's definition names the other: then both could pass for the answer."""
    return mentions(a.definition, b.names) or mentions(b.definition, a.names)


# -- generation ----------------------------------------------------------------------------------


def _distractor_tiers(bank: Bank, term: Term, anchor: str | None) -> list[list[str]]:
    tiers: list[list[str]] = []
    if anchor is not None:
        by_topic = terms_by_topic(bank)
        tiers.append(by_topic.get(anchor, []))
        tiers.extend(by_topic.get(tid, []) for tid in nearest_topics(bank, anchor, by_topic))
    linked = {tid for tier in tiers for tid in tier}
    tiers.append([tid for tid in bank.terms if tid not in linked])  # terms linked to no question
    return tiers


def _distractors(
    bank: Bank, term: Term, anchor: str | None, rng: random.Random, lang: str, kind: QuizKind
) -> list[Term] | None:
    chosen: list[Term] = []
    labels = {option_label(term, lang).casefold()}
    shorts = {(short_definition(term) or "").casefold()}
    seen = {term.id}
    for tier in _distractor_tiers(bank, term, anchor):
        pool = [tid for tid in tier if tid not in seen]
        seen.update(pool)
        rng.shuffle(pool)
        for tid in pool:
            other = bank.terms[tid]
            label = option_label(other, lang).casefold()
            if label in labels or related(term, other):
                continue
            if kind == "term":
                short = short_definition(other)
                if short is None or short.casefold() in shorts:
                    continue
                # no option may name the asked term or another option's term
                if any(mentions(short, c.names) for c in (term, *chosen)):
                    continue
                if any(mentions(s, other.names) for s in shorts if s):
                    continue
                shorts.add(short.casefold())
            labels.add(label)
            chosen.append(other)
            if len(chosen) == OPTIONS - 1:
                return chosen
    return None


def quiz_for_term(
    bank: Bank,
    term: Term,
    rng: random.Random,
    *,
    lang: str = "ru",
    topic: str | None = None,
    kind: QuizKind | None = None,
) -> Quiz | None:
    """A quiz about ``term`` (distractors from ``topic`` when the term is linked to it, else from
    the term's main topic). ``kind`` None chooses: a reverse quiz a third of the time when one is
    possible. ``None`` when no quiz of the asked kind can be built."""
    topics = term_topics(bank, term)
    anchor = topic if topic in topics else (topics[0] if topics else None)
    if lang == "en":
        # the glossary's definitions are Russian: in English the poll asks for a term (English
        # options) and labels the definition it shows as Russian, once; four Russian options would not
        kind = "definition"
    if kind is None:
        reverse = short_definition(term) is not None and rng.random() < _REVERSE_SHARE
        if reverse and (quiz := _build(bank, term, anchor, rng, lang, "term")) is not None:
            return quiz
        kind = "definition"
    return _build(bank, term, anchor, rng, lang, kind)


def _build(bank: Bank, term: Term, anchor: str | None, rng: random.Random, lang: str, kind: QuizKind) -> Quiz | None:
    if kind == "term" and short_definition(term) is None:
        return None
    others = _distractors(bank, term, anchor, rng, lang, kind)
    if others is None:
        return None
    option_terms = [term, *others]
    rng.shuffle(option_terms)
    correct = option_terms.index(term)
    label = option_label(term, lang)
    if kind == "definition":
        prompt = t(lang, "quiz.prompt_definition")
        shown, rest = _shorten(plain_definition(term), QUESTION_LIMIT - tg_len(prompt) - 1, term.names)
        question = f"{prompt}\n{shown}"
        options = tuple(option_label(o, lang) for o in option_terms)
        rest = _continuation(rest)
    else:
        question = fit(t(lang, "quiz.prompt_term", term=label), QUESTION_LIMIT)
        options = tuple(short_definition(o) or "" for o in option_terms)
        # the option showed the first sentence or its first clause: the explanation gives the
        # definition whole, from its start, rather than «…» and the rest of a cut sentence
        rest = plain_definition(term)
    if lang == "en":
        rest = ""  # the definition is Russian: English around it would mix languages mid-message
    explanation = _explanation(label, rest, t(lang, "quiz.explanation_more", term=term.term_en))
    return Quiz(
        term_id=term.id,
        kind=kind,
        topic=anchor,
        question=question,
        options=options,
        correct_option=correct,
        explanation=explanation,
        option_terms=tuple(o.id for o in option_terms),
    )


def make_quiz(
    bank: Bank,
    rng: random.Random,
    *,
    lang: str = "ru",
    topic: str | None = None,
    seen: Mapping[str, int] | None = None,
    kind: QuizKind | None = None,
) -> Quiz | None:
    """A quiz about a least-quizzed term (of ``topic``, if given): ``seen`` maps term ids to how
    often the chat had them. ``None`` when the topic has no terms."""
    candidates = topic_terms(bank, topic) if topic else list(bank.terms)
    seen = seen or {}
    tried: set[str] = set()
    while len(tried) < len(candidates):
        term_id = pick([c for c in candidates if c not in tried], seen, rng)
        if term_id is None:
            break
        tried.add(term_id)
        quiz = quiz_for_term(bank, bank.terms[term_id], rng, lang=lang, topic=topic, kind=kind)
        if quiz is not None:
            return quiz
    return None
