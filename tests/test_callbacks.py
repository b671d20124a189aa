"""Typed button data (``bot/tg/callbacks.py``): every kind round-trips, the wire format is the one
older versions sent (buttons already in chats keep working), forged data is refused and the 64-byte
cut keeps the data decodable."""

from __future__ import annotations

import dataclasses

import pytest

from bot.tg import callbacks, routes
from bot.tg.callbacks import (
    MAX_BYTES,
    AskQuestion,
    BoardPeriod,
    BoardToggle,
    ButtonData,
    Chosen,
    ConfirmShort,
    DailyAction,
    Details,
    Dispute,
    DropShort,
    Forget,
    GlossaryPage,
    GlossaryTopic,
    GlossaryTopics,
    InterviewAction,
    Language,
    Next,
    NextReview,
    NextSearchResult,
    QuestionTerms,
    Reveal,
    SearchPage,
    SearchResult,
    SelfAssess,
    TermCard,
    TopicFilter,
    decode,
)

# One example of every kind (both variants of the kinds with two ops), and the data the old
# ``encode(op, *args)`` built for the same inputs.
OLD_WIRE: list[tuple[ButtonData, str]] = [
    (Reveal("q463"), "a:q463"),
    (Details("q463"), "dt:q463"),
    (QuestionTerms("q463"), "g:q463"),
    (AskQuestion("q463"), "q:q463"),
    (Next(), "n"),
    (Next("lora"), "nt:lora"),
    (SearchResult("q463", 2, "lora ранг"), "qs:q463:2:lora ранг"),
    (NextSearchResult(3, "lora ранг"), "sn:3:lora ранг"),
    (ConfirmShort(17, 501, "да"), "ay:17:501:да"),
    (DropShort(), "an"),
    (TermCard("lora"), "t:lora:0"),
    (TermCard("lora", 2), "t:lora:2"),
    (TopicFilter("llm"), "tp:llm"),
    (TopicFilter(None), "tp:-"),
    (GlossaryPage(0), "gl:0"),
    (GlossaryTopics(), "gT"),
    (GlossaryTopic("llm", 1), "gt:llm:1"),
    (SearchPage(1, "attention"), "s:1:attention"),
    (Language("ru"), "lang:ru"),
    (Language("en"), "lang:en"),
    (DailyAction("t0930"), "d:t0930"),
    (DailyAction("topics"), "d:topics"),
    (SelfAssess("q463", 3), "sa:q463:3"),
    (SelfAssess("q463", 3, 501), "sA:q463:3:501"),
    (Dispute(4711, "m2"), "dp:4711:m2"),
    (Dispute(4711, "k0", True), "dP:4711:k0"),
    (Chosen(), "x"),
    (NextReview(), "rv"),
    (InterviewAction("resume"), "iv:resume"),
    (InterviewAction("abandon"), "iv:abandon"),
    (Forget(confirmed=True), "fg:yes"),
    (Forget(confirmed=False), "fg:no"),
    (BoardPeriod("week"), "top:week"),
    (BoardToggle("all"), "bd:all"),
]


@pytest.mark.parametrize(("kind", "wire"), OLD_WIRE, ids=[w for _, w in OLD_WIRE])
def test_wire_format_is_unchanged_and_round_trips(kind: ButtonData, wire: str) -> None:
    assert kind.encode() == wire
    assert decode(wire) == kind


def test_every_kind_is_covered_and_has_a_handler() -> None:
    assert {type(kind) for kind, _ in OLD_WIRE} == set(callbacks.KINDS)
    assert set(routes.CALLBACKS) == set(callbacks.KINDS)
    ops = [op for kind in callbacks.KINDS for op in (kind.OP, *kind.ALSO)]
    assert len(ops) == len(set(ops)), "two kinds share an op"


@pytest.mark.parametrize(
    "data",
    [
        None,
        "",
        "zz:1",  # unknown op
        "a",  # missing part
        "a:",  # empty part
        "a:-",  # "-" only clears the topic filter
        "a:../../etc",  # not an id
        "a:Q463",  # ids are lower case
        "a:q463:x",  # one part too many
        "n:",  # a kind without parts takes none
        "n:x",
        "nt:-",
        "t:lora:notanumber",
        "t:lora:-1",
        "t:lora:01",  # not how a number is written: it would not encode back the same
        "t:lora:١",  # a non-ASCII digit
        "gl:10000",
        "sa:q463:4",  # grades are 1..3
        "sa:q463:0",
        "sa:q463:3:501",  # the private variant takes no answerer
        "sA:q463:3",  # the group variant needs one
        "sA:q463:3:abc",
        "sA:q463:3:0",
        "ay:x:501:да",
        "ay:17:501:",
        "ay:17:501:   ",  # blank text
        "qs:q463:2: ",
        "s:1:",
        "lang:de",
        "iv:pause",
        "fg:maybe",
        "top:year",
        "bd:",
        "q:" + "x" * 70,  # over 64 bytes
    ],
)
def test_forged_or_malformed_data_is_refused(data: str | None) -> None:
    assert decode(data) is None


def test_free_text_may_hold_colons() -> None:
    assert decode("s:0:a:b") == SearchPage(0, "a:b")
    assert decode("ay:17:501::)") == ConfirmShort(17, 501, ":)")


@pytest.mark.parametrize(
    "kind",
    [
        SearchResult("transformer-attention", 9999, "как работает механизм внимания в трансформерах"),
        NextSearchResult(12, "ё" * 60),
        SearchPage(3, "🙂" * 30),
        ConfirmShort(10**15, 10**15 + 1, "🙂🙂🙂🙂🙂🙂🙂🙂"),
    ],
)
def test_the_64_byte_cut_only_shortens_the_text(
    kind: SearchResult | NextSearchResult | SearchPage | ConfirmShort,
) -> None:
    wire = kind.encode()
    assert len(wire.encode("utf-8")) <= MAX_BYTES
    back = decode(wire)
    assert back is not None and type(back) is type(kind)
    text = back.text if isinstance(back, ConfirmShort) else back.query  # type: ignore[union-attr]
    full = kind.text if isinstance(kind, ConfirmShort) else kind.query
    assert text and full.startswith(text) and len(text) < len(full)
    # everything but the text is kept
    field = "text" if isinstance(kind, ConfirmShort) else "query"
    assert back == dataclasses.replace(kind, **{field: text})
    assert back.encode() == wire


def test_cut_examples_are_byte_identical_to_the_old_encoder() -> None:
    """Strings the old ``encode("qs", ...)`` / ``encode("s", ...)`` built for a long query."""
    query = "как работает механизм внимания в трансформерах"
    assert SearchResult("q463", 2, query).encode() == "qs:q463:2:как работает механизм вниман"
    assert SearchPage(1, query).encode() == "s:1:как работает механизм внимания в"


def test_a_new_kind_is_declared_by_its_fields_alone() -> None:
    """A button kind needs no hand-written encoder or parser: its fields' types say it all."""

    @callbacks.button
    class Sample(ButtonData):
        OP = "zz"
        ALSO = ("zZ",)
        VARIANT = "who"
        question_id: callbacks.BankId
        page: callbacks.Small
        who: callbacks.DbId | None = None

    plain, variant = Sample("q1", 3), Sample("q1", 3, 42)
    assert (plain.encode(), variant.encode()) == ("zz:q1:3", "zZ:q1:3:42")
    assert (Sample.parse("zz", "q1:3"), Sample.parse("zZ", "q1:3:42")) == (plain, variant)
    for forged in ("Q1:3", "q1:03", "q1", "q1:3:42"):  # not a bank id, a leading zero, too few, too many
        with pytest.raises(callbacks.Malformed):
            Sample.parse("zz", forged)


def test_a_kind_that_cannot_be_read_back_is_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="annotate"):

        @callbacks.button
        class Untyped(ButtonData):
            OP = "zy"
            page: int

    with pytest.raises(TypeError, match="taken"):

        @callbacks.button
        class Twin(ButtonData):
            OP = "a"
