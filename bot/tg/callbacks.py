"""Inline-button data: ``op:arg:arg``, at most 64 UTF-8 bytes, every part validated on the way in.

Anything that does not parse (old bot versions, forged data) decodes to ``None`` and the user is
told the button is outdated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

MAX_BYTES: Final = 64
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,31}$")
_INT = re.compile(r"^\d{1,4}$")
# op -> the shape of its arguments: i = bank id, n = small int, s = free text (last), l = lang
_OPS: Final[dict[str, str]] = {
    "a": "i",  # show the reference answer of a question
    "g": "i",  # glossary terms of a question
    "n": "",  # next question (chat filter)
    "nt": "i",  # next question from this topic (the question came from `/q <topic>`)
    "qs": "ins",  # a search result: question, its index, the query
    "sn": "ns",  # the next search result: index, query
    "q": "i",  # ask this question
    "t": "in",  # term card, page of its questions
    "tp": "i",  # set the topic filter ("-" clears it)
    "gl": "n",  # glossary, alphabetical page
    "gT": "",  # glossary: pick a topic
    "gt": "in",  # glossary terms of a topic, page
    "s": "ns",  # search results page for a query
    "lang": "l",  # interface language
    "d": "s",  # daily settings action
    "sa": "in",  # self-assessment: question, grade 1..3
    "sA": "inn",  # self-assessment in a group: question, grade, the answerer (only they may press)
    "iv": "s",  # interview action
    "rv": "",  # next question due for review
    "fg": "s",  # forget-me confirmation
    "top": "s",  # leaderboard period
    "bd": "s",  # leaderboard opt in/out
    "x": "",  # a label shown as a button (the chosen self-assessment): pressing it does nothing
    "ay": "sss",  # «Это ваш ответ?» yes: ask id, author id, the short text (the answer)
    "an": "",  # «Это ваш ответ?» no
}


@dataclass(frozen=True, slots=True)
class Callback:
    op: str
    args: tuple[str, ...]

    def int(self, i: int) -> int:
        return int(self.args[i])


def encode(op: str, *args: object) -> str:
    data = ":".join([op, *(str(a) for a in args)])
    raw = data.encode("utf-8")
    if len(raw) > MAX_BYTES:
        # only free text (the last part) may be cut; cut on a character boundary
        raw = raw[:MAX_BYTES]
        data = raw.decode("utf-8", errors="ignore")
    return data


def decode(data: str | None) -> Callback | None:
    if not data or len(data.encode("utf-8")) > MAX_BYTES:
        return None
    op, _, rest = data.partition(":")
    shape = _OPS.get(op)
    if shape is None:
        return None
    if not shape:
        return Callback(op, ()) if not rest else None
    parts = rest.split(":", len(shape) - 1) if rest else []
    if len(parts) != len(shape):
        return None
    for part, kind in zip(parts, shape, strict=True):
        if kind == "i" and not (_ID.match(part) or part == "-"):
            return None
        if kind == "n" and not _INT.match(part):
            return None
        if kind == "l" and part not in ("ru", "en"):
            return None
        if kind == "s" and not part.strip():
            return None
    return Callback(op, tuple(parts))
