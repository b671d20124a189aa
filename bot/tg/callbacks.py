"""Inline-button data: one small frozen dataclass per button kind, declared once.

A kind is declared by its fields alone: each field's type says how it is written into the button's
data and checked on the way back (``BankId``, ``Small``, ``DbId``, ``Text``, ``Literal[...]``…).
:func:`button` makes the class a frozen dataclass and registers it: :data:`KINDS` and the decoder
come from the registrations, and ``AT_ONCE`` (a button that only shows something) tells the router
to answer the press at once. Which handler a kind goes to is in the table of ``tg/routes.py``
(``CALLBACKS``).

Each kind encodes itself to ``op:arg:arg`` (at most 64 UTF-8 bytes; only a free-text tail is ever
cut, on a character boundary) and :func:`decode` turns such a string back into the kind, every part
validated on the way in. The wire format is the one older versions sent, so buttons already in
chats keep working. Anything that does not parse (old bot versions, forged data) decodes to
``None`` and the user is told the button is outdated.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, ClassVar, Final, Literal, TypeVar, Union, get_args, get_origin

from typing_extensions import dataclass_transform

MAX_BYTES: Final = 64
_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")  # a bank id: question, term, topic
_SMALL = re.compile(r"0|[1-9][0-9]{0,3}")  # an index or page: 0..9999, no leading zeros
_NUMBER = re.compile(r"[1-9][0-9]{0,19}")  # a database or Telegram id (positive)
_CHARGE = re.compile(r"[mk](?:0|[1-9][0-9]?)")  # m<i>: a misconception, k<i>: a reversed key point


class Malformed(ValueError):
    """A part of button data that does not validate."""


@dataclass(frozen=True, slots=True)
class Part:
    """How one field is read from its part of the data (raising :class:`Malformed`) and written."""

    read: Callable[[str], object]
    write: Callable[[object], str] = str


def _pattern(rx: re.Pattern[str], convert: Callable[[str], object] = str) -> Part:
    def read(part: str) -> object:
        if not rx.fullmatch(part):
            raise Malformed(part)
        return convert(part)

    return Part(read)


def _text(part: str) -> str:
    if not part.strip():
        raise Malformed(part)
    return part


def _maybe_id(part: str) -> str | None:
    return None if part == "-" else str(_ID_PART.read(part))


def _yes_no(part: str) -> bool:
    if part not in ("yes", "no"):
        raise Malformed(part)
    return part == "yes"


_ID_PART: Final = _pattern(_ID)
BankId = Annotated[str, _ID_PART]  # a question, term or topic id
MaybeBankId = Annotated[str | None, Part(_maybe_id, lambda v: "-" if v is None else str(v))]  # ``-``: none
Small = Annotated[int, _pattern(_SMALL, int)]  # an index or a page
DbId = Annotated[int, _pattern(_NUMBER, int)]  # a database row or a Telegram user
Text = Annotated[str, Part(_text)]  # free text: only as the last field; may hold ``:``, cut to fit
ChargeKey = Annotated[str, _pattern(_CHARGE)]
_YES_NO: Final = Part(_yes_no, lambda v: "yes" if v else "no")
YesNo = Annotated[bool, _YES_NO]
Period = Literal["week", "all"]
Lang = Literal["ru", "en"]


def _literal(values: tuple[str, ...], convert: Callable[[str], object] = str) -> Part:
    def read(part: str) -> object:
        if part not in values:
            raise Malformed(part)
        return convert(part)

    return Part(read)


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    part: Part
    default: object  # dataclasses.MISSING when required


@dataclass(frozen=True, slots=True)
class _Spec:
    fields: tuple[_Field, ...]
    variant: _Field | None  # the optional field that selects the second op
    flag: bool  # the variant is a bool: its op says it, it is not a part


_SPECS: dict[type[ButtonData], _Spec] = {}


def _part_of(hint: object, where: str) -> Part:
    if get_origin(hint) in (Union, types.UnionType):  # ``X | None``: an optional variant field
        hint = next(a for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is Annotated:
        meta = [m for m in get_args(hint)[1:] if isinstance(m, Part)]
        if meta:
            return meta[0]
        hint = get_args(hint)[0]
    if get_origin(hint) is Literal:
        return _literal(tuple(str(a) for a in get_args(hint)))
    if hint is bool:  # a variant flag: its op says it
        return _YES_NO
    raise TypeError(f"{where}: annotate the field with a part type (BankId, Small, DbId, Text, …)")


def _spec(cls: type[ButtonData]) -> _Spec:
    hints = typing.get_type_hints(cls, include_extras=True)
    fields = tuple(
        _Field(f.name, _part_of(hints[f.name], f"{cls.__name__}.{f.name}"), f.default) for f in dataclasses.fields(cls)
    )
    variant = next((f for f in fields if f.name == cls.VARIANT), None)
    if (variant is None) != (not cls.ALSO):
        raise TypeError(f"{cls.__name__}: a second op (ALSO) needs its VARIANT field, and only then")
    return _Spec(fields, variant, variant is not None and hints[variant.name] is bool)


@dataclass(frozen=True, slots=True)
class ButtonData:
    """The data behind one inline button. A kind names its wire ``OP`` and declares its fields
    (their order is the order of the parts); declare it with :func:`button`."""

    OP: ClassVar[str]
    # a second op: the kind's ``VARIANT`` field is set (a group's answerer, a report's dispute)
    ALSO: ClassVar[tuple[str, ...]] = ()
    VARIANT: ClassVar[str | None] = None
    AT_ONCE: ClassVar[bool] = False  # only shows something: the press is answered at once

    def op(self) -> str:
        spec = _SPECS[type(self)]
        if spec.variant is not None and getattr(self, spec.variant.name) not in (None, False):
            return self.ALSO[0]
        return self.OP

    def parts(self) -> tuple[str, ...]:
        spec = _SPECS[type(self)]
        on = self.op() != self.OP
        return tuple(
            f.part.write(getattr(self, f.name)) for f in spec.fields if f is not spec.variant or (on and not spec.flag)
        )

    @classmethod
    def parse(cls, op: str, rest: str | None) -> ButtonData:
        """Build the kind from what follows its op; raises :class:`Malformed`."""
        spec = _SPECS[cls]
        on = op != cls.OP
        wanted = [f for f in spec.fields if f is not spec.variant or (on and not spec.flag)]
        values = {f.name: f.part.read(p) for f, p in zip(wanted, _split(rest, len(wanted)), strict=True)}
        if spec.variant is not None and spec.flag:
            values[spec.variant.name] = on
        return cls(**values)

    def encode(self) -> str:
        data = ":".join([self.op(), *self.parts()])
        raw = data.encode("utf-8")
        if len(raw) > MAX_BYTES:
            # only free text (the last part) may be cut; cut on a character boundary
            data = raw[:MAX_BYTES].decode("utf-8", errors="ignore")
        return data


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


K = TypeVar("K", bound=ButtonData)
_REGISTERED: list[type[ButtonData]] = []


@dataclass_transform(frozen_default=True)
def button(cls: type[K]) -> type[K]:
    """Declare a button kind: a frozen dataclass whose fields are its parts, registered for
    :func:`decode`."""
    kind = dataclass(frozen=True, slots=True)(cls)
    _SPECS[kind] = _spec(kind)
    if any(kind.OP == k.OP or kind.OP in k.ALSO or set(kind.ALSO) & {k.OP, *k.ALSO} for k in _REGISTERED):
        raise TypeError(f"{kind.__name__}: op {kind.OP!r} is taken")
    _REGISTERED.append(kind)
    return kind


# -- questions ---------------------------------------------------------------------------------


@button
class Reveal(ButtonData):
    """«Показать ответ»: the reference answer of a question."""

    OP = "a"
    AT_ONCE = True
    question_id: BankId


@button
class Details(ButtonData):
    """«Подробнее»: the rest of a reference answer (pitfalls, numbers, sources)."""

    OP = "dt"
    AT_ONCE = True
    question_id: BankId


@button
class QuestionTerms(ButtonData):
    """«Термины»: the glossary terms of a question."""

    OP = "g"
    AT_ONCE = True
    question_id: BankId


@button
class AskQuestion(ButtonData):
    """A question's button in a list: ask it."""

    OP = "q"
    AT_ONCE = True
    question_id: BankId


@button
class Next(ButtonData):
    """«Следующий»: by the chat's filter (``n``), or from ``topic`` (``nt``: the question came
    from `/q <topic>`)."""

    OP = "n"
    ALSO = ("nt",)
    VARIANT = "topic"
    AT_ONCE = True
    topic: BankId | None = None


@button
class SearchResult(ButtonData):
    """A question from search results: its index among them and the query (cut to fit)."""

    OP = "qs"
    AT_ONCE = True
    question_id: BankId
    index: Small
    query: Text


@button
class NextSearchResult(ButtonData):
    """«Следующий» after a search result: the result at ``index`` of ``query``."""

    OP = "sn"
    AT_ONCE = True
    index: Small
    query: Text


@button
class ConfirmShort(ButtonData):
    """«Это ваш ответ?» yes: the ask, its author (only they may press) and the short text."""

    OP = "ay"
    ask_id: DbId
    author: DbId
    text: Text


@button
class DropShort(ButtonData):
    """«Это ваш ответ?» no."""

    OP = "an"


# -- browsing ----------------------------------------------------------------------------------


@button
class TermCard(ButtonData):
    """A glossary term's card, at a page of its questions."""

    OP = "t"
    AT_ONCE = True
    term_id: BankId
    page: Small = 0


@button
class TopicFilter(ButtonData):
    """Set the chat's topic filter; ``None`` (``-`` on the wire) clears it."""

    OP = "tp"
    topic_id: MaybeBankId


@button
class GlossaryPage(ButtonData):
    """The glossary, alphabetical, at a page."""

    OP = "gl"
    AT_ONCE = True
    page: Small


@button
class GlossaryTopics(ButtonData):
    """The glossary: pick a topic."""

    OP = "gT"
    AT_ONCE = True


@button
class GlossaryTopic(ButtonData):
    """The glossary terms of a topic, at a page."""

    OP = "gt"
    AT_ONCE = True
    topic_id: BankId
    page: Small


@button
class SearchPage(ButtonData):
    """A page of search results for a query (cut to fit)."""

    OP = "s"
    AT_ONCE = True
    page: Small
    query: Text


# -- settings, practice, interviews, quizzes ---------------------------------------------------


@button
class Language(ButtonData):
    """The interface language."""

    OP = "lang"
    lang: Lang


@button
class DailyAction(ButtonData):
    """A /daily settings button: ``on``, ``off``, ``wd``, ``t<minute>``, ``topics`` (the daily
    service tells a stale one)."""

    OP = "d"
    action: Text


@button
class SelfAssess(ButtonData):
    """«Знал / Частично / Не знал» (grade 3..1). In a group (``sA``) the buttons carry the
    answerer: only they may press."""

    OP = "sa"
    ALSO = ("sA",)
    VARIANT = "answerer"
    question_id: BankId
    grade: Annotated[int, _literal(("1", "2", "3"), int)]
    answerer: DbId | None = None


@button
class Chosen(ButtonData):
    """A label shown as a button (the chosen self-assessment): pressing it does nothing."""

    OP = "x"


@button
class NextReview(ButtonData):
    """The next question due for review."""

    OP = "rv"


@button
class InterviewAction(ButtonData):
    """Resume or abandon the open mock interview."""

    OP = "iv"
    action: Literal["resume", "abandon"]


@button
class Forget(ButtonData):
    """The /forget confirmation: yes deletes the user's data, no keeps it."""

    OP = "fg"
    confirmed: YesNo


@button
class BoardPeriod(ButtonData):
    """The quiz leaderboard for a period."""

    OP = "top"
    period: Period


@button
class BoardToggle(ButtonData):
    """Hide or show the presser on the leaderboard (then show ``period`` again)."""

    OP = "bd"
    period: Period


@button
class Dispute(ButtonData):
    """«Это не ошибка» under a charge of the grader: the answer and the charge (only the answer's
    author may press it; the service checks). ``dP``: pressed in a mock interview's report."""

    OP = "dp"
    ALSO = ("dP",)
    VARIANT = "report"
    answer_id: DbId
    charge: ChargeKey
    report: bool = False


KINDS: Final[tuple[type[ButtonData], ...]] = tuple(_REGISTERED)
_KIND_OF_OP: Final[dict[str, type[ButtonData]]] = {op: kind for kind in KINDS for op in (kind.OP, *kind.ALSO)}


def decode(data: str | None) -> ButtonData | None:
    """The button kind behind ``data``; ``None`` for anything unknown or malformed."""
    if not data or len(data.encode("utf-8")) > MAX_BYTES:
        return None
    op, sep, rest = data.partition(":")
    kind = _KIND_OF_OP.get(op)
    if kind is None:
        return None
    try:
        return kind.parse(op, rest if sep else None)
    except Malformed:
        return None
