"""Hostile and malformed input, property-based (hypothesis): parsers never crash, and what the bot
renders is always HTML that Telegram accepts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.bank import BankError, default_bank_path, load_bank
from bot.bank.markdown import pack, render_blocks, to_html, to_plain, visible_length
from bot.core import interview
from bot.core.grading import grade
from bot.core.schedule import ScheduleError, parse_time, parse_zone
from bot.core.text import keys
from bot.tg.callbacks import MAX_BYTES, ConfirmShort, SearchPage, SearchResult, decode
from tests.conftest import shipped_catalog
from tests.fakebot import ApiError, parse_html, utf16_len

CATALOG = shipped_catalog()
BANK = CATALOG.bank
TEXT = st.text(alphabet=st.characters(max_codepoint=0x2FFFF, exclude_categories=["Cs"]), max_size=400)
_PIECES = [*"ab _*`\n<>&#-1.фяё√ᵀ\"'", "**", "```", "\n\n", "- ", "1. ", "_x_", "`c`"]
MARKDOWNISH = st.lists(st.sampled_from(_PIECES), max_size=120).map("".join)


@given(TEXT)
def test_time_parser_never_crashes(text: str) -> None:
    try:
        minute = parse_time(text)
    except ScheduleError:
        return
    assert 0 <= minute < 24 * 60


@given(TEXT)
def test_zone_parser_never_crashes(text: str) -> None:
    try:
        zone = parse_zone(text)
    except ScheduleError:
        return
    from bot.core.schedule import get_tz

    get_tz(zone)


@given(st.one_of(TEXT, st.binary(max_size=80).map(lambda b: b.decode("latin-1"))))
def test_callback_decoder_accepts_only_well_formed_data(data: str) -> None:
    kind = decode(data)
    if kind is not None:
        assert len(data.encode("utf-8")) <= MAX_BYTES
        assert kind.encode() == data


@given(TEXT)
def test_encoded_callback_data_always_fits(arg: str) -> None:
    for kind in (SearchPage(1, arg), SearchResult("q463", 1, arg), ConfirmShort(12, 501, arg)):
        assert len(kind.encode().encode("utf-8")) <= MAX_BYTES


@given(TEXT)
def test_question_references_and_deep_links_never_crash(ref: str) -> None:
    q = BANK.resolve(ref)
    assert q is None or q.id in BANK.questions
    CATALOG.find_topic(ref)
    CATALOG.best_match(ref[:200])
    CATALOG.glossary.lookup(ref[:200])


@given(st.lists(TEXT.map(lambda t: t[:20]), max_size=6))
def test_interview_arguments_never_crash(tokens: list[str]) -> None:
    for token in tokens:
        interview.parse_time_limit(token)
    chosen = interview.choose(BANK, [], 5, random.Random(0))
    assert len(chosen) == 5


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(MARKDOWNISH)
def test_rendered_markdown_is_always_valid_telegram_html(text: str) -> None:
    html_text = to_html(text)
    if not to_plain(text).strip():
        return
    try:
        plain = parse_html(html_text)
    except ApiError as err:  # pragma: no cover - shows the failing input
        raise AssertionError(f"{err.description}: {html_text!r}") from err
    assert utf16_len(plain) == visible_length(html_text)


@settings(max_examples=100)
@given(MARKDOWNISH, st.integers(min_value=60, max_value=400))
def test_packed_messages_fit_and_stay_valid(text: str, limit: int) -> None:
    blocks = render_blocks(text * 5)
    for message in pack(blocks, limit):
        if message.strip():
            parse_html(message)
        assert visible_length(message) <= limit


@given(TEXT)
def test_grader_and_keys_never_crash(text: str) -> None:
    keys(text)
    result = grade(BANK.questions["q463"], text)
    assert 0.0 <= result.score <= result.coverage <= 1.0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400), st.integers(min_value=0, max_value=3000))
def test_a_damaged_bank_file_is_reported_not_crashed(tmp_path: Path, garbage: bytes, cut: int) -> None:
    """Truncate a real bank file and splice in garbage: load_bank raises BankError with file:line."""
    source = (default_bank_path() / "questions" / "lora.yaml").read_bytes()
    folder = tmp_path / "bank"
    folder.mkdir(exist_ok=True)
    for name in ("topics.yaml", "glossary.yaml"):
        (folder / name).write_bytes((default_bank_path() / name).read_bytes())
    (folder / "lora.yaml").write_bytes(source[:cut] + garbage + source[cut + len(garbage) :])
    problems = []
    try:
        load_bank(folder)
    except BankError as exc:
        problems = exc.problems
        assert problems
    except RecursionError:  # pragma: no cover - YAML nesting bombs are not a realistic bank
        pytest.skip("nesting too deep")
    for problem in problems:
        assert problem.file.endswith(".yaml")
        assert problem.line >= 0
