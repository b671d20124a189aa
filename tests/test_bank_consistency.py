"""No correct text of the shipped bank (card, details and their code comments, follow-up answers)
draws a charge or a reversal, and every misconception is found in its own claim (issue 28: feedback
never accuses a right answer). The default run holds each item against its own texts (~3 s); the
slow step (.ci/run) holds every item against every text of its topic, as scripts/rubric_check.py does."""

from __future__ import annotations

import pytest

from bot.bank import Bank
from bot.core import consistency
from tests.conftest import shipped_bank


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def _report(problems: list[consistency.Problem]) -> str:
    return f"{len(problems)} problem(s) (scripts/rubric_check.py lists them):\n" + "\n".join(map(str, problems[:40]))


def test_no_correct_text_is_charged_by_its_own_question_and_every_claim_is_found(bank: Bank) -> None:
    problems = consistency.check(bank, topic_wide=False)
    assert not problems, _report(problems)


@pytest.mark.slow
def test_no_correct_text_is_charged_by_any_question_of_its_topic(bank: Bank) -> None:
    problems = consistency.check(bank)
    assert not problems, _report(problems)
