"""The rubric held against the bank's own correct texts (issue 28: feedback never accuses a right answer).

Every text the bank itself gives as correct — the reference card, the details (prose, and the comments
of their code), each follow-up's answer — must draw no charge (an asserted misconception) and no
reversal (a key point stated the other way round), neither against its own item nor against any other
item of the same topic. And every misconception must be found in its own claim, or it can never fire.

``scripts/rubric_check.py`` prints these problems for a bank or some of its files; tests/test_rubric.py
keeps the shipped bank free of them.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from bot.bank import Bank, Question
from bot.core.grading import find_charges, matcher_for
from bot.core.matching import Hit, Matcher, Text

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_COMMENT = re.compile(r"(?:#|//)\s?(.*)$", re.M)


def own_texts(q: Question) -> list[tuple[str, str]]:
    """(label, text) of every text the bank gives as correct for ``q``."""
    out = [("answer", q.answer)]
    if q.details:
        prose = _FENCE.sub("\n\n", q.details)
        out.append(("details", prose))
        comments = [c.strip() for block in _FENCE.findall(q.details) for c in _COMMENT.findall(block) if c.strip()]
        if comments:
            out.append(("code comments", "\n\n".join(comments)))
    out += [(f"follow-up {i + 1}", f.answer) for i, f in enumerate(q.follow_ups)]
    return out


@dataclass(frozen=True, slots=True)
class Problem:
    question: str  # the item charged
    kind: str  # "charge" | "reversal" | "deaf"
    index: int  # the misconception (charge, deaf) or key point (reversal)
    source: str  # "<item> <label>" of the correct text, or "" for deaf
    sentence: str  # the sentence charged

    def __str__(self) -> str:
        if self.kind == "deaf":
            return f"{self.question} DEAF misconception {self.index}: not found in its own claim"
        what = "misconception" if self.kind == "charge" else "REVERSED key point"
        return f"{self.question} {what} {self.index} charged on {self.source}: «{self.sentence}»"


def check(bank: Bank, only: Iterable[str] | None = None, *, topic_wide: bool = True) -> list[Problem]:
    """Problems of the items ``only`` (ids; default: all) against the bank's correct texts of their
    topics (``topic_wide=False``: against their own texts only, a thirteenth of the work)."""
    matcher = matcher_for(bank.lexicon)
    questions = list(bank.questions.values())
    wanted = set(only) if only is not None else None
    by_topic: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_topic[q.topic].append(q)
    texts: dict[str, list[tuple[str, Text]]] = {}
    problems: list[Problem] = []
    for q in questions:
        if wanted is not None and q.id not in wanted:
            continue
        for source in by_topic[q.topic] if topic_wide else [q]:
            if source.id not in texts:
                texts[source.id] = [(label, matcher.tokens(t)) for label, t in own_texts(source)]
            for label, text in texts[source.id]:
                problems += _charges(q, text, matcher, f"{source.id} {label}")
        for i, m in enumerate(q.misconceptions):
            charged, unsure, _, _ = find_charges(q, matcher.tokens(m.claim), matcher)
            if not any(c.index == i for c in (*charged, *unsure)):
                problems.append(Problem(q.id, "deaf", i, "", ""))
    return problems


def _charges(q: Question, text: Text, matcher: Matcher, source: str) -> list[Problem]:
    charged, _, reversed_, _ = find_charges(q, text, matcher, coverage=False)
    return [Problem(q.id, "charge", c.index, source, c.sentence) for c in charged] + [
        Problem(q.id, "reversal", c.index, source, c.sentence) for c in reversed_
    ]


def fired(q: Question, kind: str, index: int, sentence: str, matcher: Matcher) -> list[str]:
    """The phrases of a misconception (or key point) that match in ``sentence`` (what to fix)."""
    text = matcher.tokens(sentence)
    phrases = q.misconceptions[index].match if kind == "charge" else q.key_points[index].match
    return [p for p in phrases if any(c.hit is not Hit.NONE for c in matcher.claims((p,), text))]
