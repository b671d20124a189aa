"""Inline-button data: one small frozen dataclass per button kind.

Each kind encodes itself to ``op:arg:arg`` (at most 64 UTF-8 bytes; only a free-text tail is ever
cut, on a character boundary) and :func:`decode` turns such a string back into the kind, every part
validated on the way in. The wire format is the one older versions sent, so buttons already in
chats keep working. Anything that does not parse (old bot versions, forged data) decodes to
``None`` and the user is told the button is outdated. Which handler a kind goes to is in the table
of ``tg/app.py`` (``CALLBACKS``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, Literal, TypeAlias

MAX_BYTES: Final = 64
_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")  # a bank id: question, term, topic
_SMALL = re.compile(r"0|[1-9][0-9]{0,3}")  # an index or page: 0..9999, no leading zeros
_NUMBER = re.compile(r"[1-9][0-9]{0,19}")  # a database or Telegram id (positive)

Period = Literal["week", "all"]
Lang = Literal["ru", "en"]


class Malformed(ValueError):
    """A part of button data that does not validate."""


def _id(part: str) -> str:
    if not _ID.fullmatch(part):
        raise Malformed(part)
    return part


def _small(part: str) -> int:
    if not _SMALL.fullmatch(part):
        raise Malformed(part)
    return int(part)


def _number(part: str) -> int:
    if not _NUMBER.fullmatch(part):
        raise Malformed(part)
    return int(part)


def _text(part: str) -> str:
    if not part.strip():
        raise Malformed(part)
    return part


def _fixed(part: str, allowed: Sequence[str]) -> str:
    if part not in allowed:
        raise Malformed(part)
    return part


def _split(rest: str | None, count: int) -> list[str]:
    """The ``count`` parts after the op (``rest`` is ``None`` when there is no ``:``); free text
    is always the last part and may hold ``:``."""
    if count == 0:
        if rest is not None:
            raise Malformed(rest)
        return []
    parts = rest.split(":", count - 1) if rest is not None else []
    if len(parts) != count:
        raise Malformed(rest or "")
    return parts


@dataclass(frozen=True, slots=True)
class ButtonData:
    """The data behind one inline button. Subclasses name their wire ``OP`` and say how their
    fields become parts (:meth:`parts`) and back (:meth:`parse`)."""

    OP: ClassVar[str]
    # the other ops a kind also parses (a variant with one more part, e.g. a group's answerer)
    ALSO: ClassVar[tuple[str, ...]] = ()

    def op(self) -> str:
        return self.OP

    def parts(self) -> tuple[object, ...]:
        return ()

    @classmethod
    def parse(cls, op: str, rest: str | None) -> ButtonData:
        """Build the kind from what follows its op; raises :class:`Malformed`."""
        _split(rest, 0)
        return cls()

    def encode(self) -> str:
        data = ":".join([self.op(), *(str(p) for p in self.parts())])
        raw = data.encode("utf-8")
        if len(raw) > MAX_BYTES:
            # only free text (the last part) may be cut; cut on a character boundary
            data = raw[:MAX_BYTES].decode("utf-8", errors="ignore")
        return data


# -- questions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reveal(ButtonData):
    """«Показать ответ»: the reference answer of a question."""

    OP = "a"
    question_id: str

    def parts(self) -> tuple[object, ...]:
        return (self.question_id,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Reveal:
        parts = _split(rest, 1)
        return cls(_id(parts[0]))


@dataclass(frozen=True, slots=True)
class Details(ButtonData):
    """«Подробнее»: the rest of a reference answer (pitfalls, numbers, sources)."""

    OP = "dt"
    question_id: str

    def parts(self) -> tuple[object, ...]:
        return (self.question_id,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Details:
        parts = _split(rest, 1)
        return cls(_id(parts[0]))


@dataclass(frozen=True, slots=True)
class QuestionTerms(ButtonData):
    """«Термины»: the glossary terms of a question."""

    OP = "g"
    question_id: str

    def parts(self) -> tuple[object, ...]:
        return (self.question_id,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> QuestionTerms:
        parts = _split(rest, 1)
        return cls(_id(parts[0]))


@dataclass(frozen=True, slots=True)
class AskQuestion(ButtonData):
    """A question's button in a list: ask it."""

    OP = "q"
    question_id: str

    def parts(self) -> tuple[object, ...]:
        return (self.question_id,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> AskQuestion:
        parts = _split(rest, 1)
        return cls(_id(parts[0]))


@dataclass(frozen=True, slots=True)
class Next(ButtonData):
    """«Следующий»: by the chat's filter (``n``), or from ``topic`` (``nt``: the question came
    from `/q <topic>`)."""

    OP = "n"
    ALSO = ("nt",)
    topic: str | None = None

    def op(self) -> str:
        return "n" if self.topic is None else "nt"

    def parts(self) -> tuple[object, ...]:
        return () if self.topic is None else (self.topic,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Next:
        if op == "n":
            _split(rest, 0)
            return cls()
        parts = _split(rest, 1)
        return cls(_id(parts[0]))


@dataclass(frozen=True, slots=True)
class SearchResult(ButtonData):
    """A question from search results: its index among them and the query (cut to fit)."""

    OP = "qs"
    question_id: str
    index: int
    query: str

    def parts(self) -> tuple[object, ...]:
        return (self.question_id, self.index, self.query)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> SearchResult:
        parts = _split(rest, 3)
        return cls(_id(parts[0]), _small(parts[1]), _text(parts[2]))


@dataclass(frozen=True, slots=True)
class NextSearchResult(ButtonData):
    """«Следующий» after a search result: the result at ``index`` of ``query``."""

    OP = "sn"
    index: int
    query: str

    def parts(self) -> tuple[object, ...]:
        return (self.index, self.query)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> NextSearchResult:
        parts = _split(rest, 2)
        return cls(_small(parts[0]), _text(parts[1]))


@dataclass(frozen=True, slots=True)
class ConfirmShort(ButtonData):
    """«Это ваш ответ?» yes: the ask, its author (only they may press) and the short text."""

    OP = "ay"
    ask_id: int
    author: int
    text: str

    def parts(self) -> tuple[object, ...]:
        return (self.ask_id, self.author, self.text)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> ConfirmShort:
        parts = _split(rest, 3)
        return cls(_number(parts[0]), _number(parts[1]), _text(parts[2]))


@dataclass(frozen=True, slots=True)
class DropShort(ButtonData):
    """«Это ваш ответ?» no."""

    OP = "an"


# -- browsing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TermCard(ButtonData):
    """A glossary term's card, at a page of its questions."""

    OP = "t"
    term_id: str
    page: int = 0

    def parts(self) -> tuple[object, ...]:
        return (self.term_id, self.page)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> TermCard:
        parts = _split(rest, 2)
        return cls(_id(parts[0]), _small(parts[1]))


@dataclass(frozen=True, slots=True)
class TopicFilter(ButtonData):
    """Set the chat's topic filter; ``None`` (``-`` on the wire) clears it."""

    OP = "tp"
    topic_id: str | None

    def parts(self) -> tuple[object, ...]:
        return (self.topic_id or "-",)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> TopicFilter:
        parts = _split(rest, 1)
        return cls(None if parts[0] == "-" else _id(parts[0]))


@dataclass(frozen=True, slots=True)
class GlossaryPage(ButtonData):
    """The glossary, alphabetical, at a page."""

    OP = "gl"
    page: int

    def parts(self) -> tuple[object, ...]:
        return (self.page,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> GlossaryPage:
        parts = _split(rest, 1)
        return cls(_small(parts[0]))


@dataclass(frozen=True, slots=True)
class GlossaryTopics(ButtonData):
    """The glossary: pick a topic."""

    OP = "gT"


@dataclass(frozen=True, slots=True)
class GlossaryTopic(ButtonData):
    """The glossary terms of a topic, at a page."""

    OP = "gt"
    topic_id: str
    page: int

    def parts(self) -> tuple[object, ...]:
        return (self.topic_id, self.page)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> GlossaryTopic:
        parts = _split(rest, 2)
        return cls(_id(parts[0]), _small(parts[1]))


@dataclass(frozen=True, slots=True)
class SearchPage(ButtonData):
    """A page of search results for a query (cut to fit)."""

    OP = "s"
    page: int
    query: str

    def parts(self) -> tuple[object, ...]:
        return (self.page, self.query)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> SearchPage:
        parts = _split(rest, 2)
        return cls(_small(parts[0]), _text(parts[1]))


# -- settings, practice, interviews, quizzes ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Language(ButtonData):
    """The interface language."""

    OP = "lang"
    lang: Lang

    def parts(self) -> tuple[object, ...]:
        return (self.lang,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Language:
        parts = _split(rest, 1)
        return cls("ru" if _fixed(parts[0], ("ru", "en")) == "ru" else "en")


@dataclass(frozen=True, slots=True)
class DailyAction(ButtonData):
    """A /daily settings button: ``on``, ``off``, ``wd``, ``t<minute>``, ``topics`` (the daily
    service tells a stale one)."""

    OP = "d"
    action: str

    def parts(self) -> tuple[object, ...]:
        return (self.action,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> DailyAction:
        parts = _split(rest, 1)
        return cls(_text(parts[0]))


@dataclass(frozen=True, slots=True)
class SelfAssess(ButtonData):
    """«Знал / Частично / Не знал» (grade 3..1). In a group (``sA``) the buttons carry the
    answerer: only they may press."""

    OP = "sa"
    ALSO = ("sA",)
    question_id: str
    grade: int
    answerer: int | None = None

    def op(self) -> str:
        return "sa" if self.answerer is None else "sA"

    def parts(self) -> tuple[object, ...]:
        head = (self.question_id, self.grade)
        return head if self.answerer is None else (*head, self.answerer)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> SelfAssess:
        parts = _split(rest, 2 if op == "sa" else 3)
        grade = _small(parts[1])
        if grade not in (1, 2, 3):
            raise Malformed(parts[1])
        return cls(_id(parts[0]), grade, _number(parts[2]) if op == "sA" else None)


@dataclass(frozen=True, slots=True)
class Chosen(ButtonData):
    """A label shown as a button (the chosen self-assessment): pressing it does nothing."""

    OP = "x"


@dataclass(frozen=True, slots=True)
class NextReview(ButtonData):
    """The next question due for review."""

    OP = "rv"


@dataclass(frozen=True, slots=True)
class InterviewAction(ButtonData):
    """Resume or abandon the open mock interview."""

    OP = "iv"
    action: Literal["resume", "abandon"]

    def parts(self) -> tuple[object, ...]:
        return (self.action,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> InterviewAction:
        parts = _split(rest, 1)
        return cls("resume" if _fixed(parts[0], ("resume", "abandon")) == "resume" else "abandon")


@dataclass(frozen=True, slots=True)
class Forget(ButtonData):
    """The /forget confirmation: yes deletes the user's data, no keeps it."""

    OP = "fg"
    confirmed: bool

    def parts(self) -> tuple[object, ...]:
        return ("yes" if self.confirmed else "no",)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Forget:
        parts = _split(rest, 1)
        return cls(_fixed(parts[0], ("yes", "no")) == "yes")


def _period(part: str) -> Period:
    return "week" if _fixed(part, ("week", "all")) == "week" else "all"


@dataclass(frozen=True, slots=True)
class BoardPeriod(ButtonData):
    """The quiz leaderboard for a period."""

    OP = "top"
    period: Period

    def parts(self) -> tuple[object, ...]:
        return (self.period,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> BoardPeriod:
        parts = _split(rest, 1)
        return cls(_period(parts[0]))


@dataclass(frozen=True, slots=True)
class BoardToggle(ButtonData):
    """Hide or show the presser on the leaderboard (then show ``period`` again)."""

    OP = "bd"
    period: Period

    def parts(self) -> tuple[object, ...]:
        return (self.period,)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> BoardToggle:
        parts = _split(rest, 1)
        return cls(_period(parts[0]))


_CHARGE = re.compile(r"[mk](?:0|[1-9][0-9]?)")  # m<i>: a misconception, k<i>: a reversed key point


@dataclass(frozen=True, slots=True)
class Dispute(ButtonData):
    """«Это не ошибка» under a charge of the grader: the answer and the charge (only the answer's
    author may press it; the service checks). ``dP``: pressed in a mock interview's report."""

    OP = "dp"
    ALSO = ("dP",)
    answer_id: int
    charge: str
    report: bool = False

    def op(self) -> str:
        return "dP" if self.report else "dp"

    def parts(self) -> tuple[object, ...]:
        return (self.answer_id, self.charge)

    @classmethod
    def parse(cls, op: str, rest: str | None) -> Dispute:
        parts = _split(rest, 2)
        if not _CHARGE.fullmatch(parts[1]):
            raise Malformed(parts[1])
        return cls(_number(parts[0]), parts[1], op == "dP")


KINDS: Final[tuple[type[ButtonData], ...]] = (
    Reveal, Details, QuestionTerms, AskQuestion, Next, SearchResult, NextSearchResult, ConfirmShort, DropShort,
    TermCard, TopicFilter, GlossaryPage, GlossaryTopics, GlossaryTopic, SearchPage,
    Language, DailyAction, SelfAssess, Chosen, NextReview, InterviewAction, Forget, BoardPeriod, BoardToggle,
    Dispute,
)  # fmt: skip

Parser: TypeAlias = Callable[[str, str | None], ButtonData]
_PARSERS: Final[dict[str, Parser]] = {op: kind.parse for kind in KINDS for op in (kind.OP, *kind.ALSO)}


def decode(data: str | None) -> ButtonData | None:
    """The button kind behind ``data``; ``None`` for anything unknown or malformed."""
    if not data or len(data.encode("utf-8")) > MAX_BYTES:
        return None
    op, sep, rest = data.partition(":")
    parse = _PARSERS.get(op)
    if parse is None:
        return None
    try:
        return parse(op, rest if sep else None)
    except Malformed:
        return None
