"""No correct text of the shipped bank (card, details and their code comments, follow-up answers)
draws a charge or a reversal, from its own question or any other question of its topic, and every
misconception is found in its own claim (issue 28: feedback never accuses a right answer).

Its own file, so the test workers (a file each at a time) run it beside tests/test_rubric.py."""

from __future__ import annotations

import pytest

from bot.bank import Bank, default_bank_path, load_bank
from bot.core import consistency


@pytest.fixture(scope="module")
def bank() -> Bank:
    return load_bank(default_bank_path())


TOPICS = sorted({q.topic for q in load_bank(default_bank_path()).questions.values()})


@pytest.mark.parametrize("topic", TOPICS)  # one test per topic: the workers share the ~20 s of CPU
def test_no_correct_text_of_the_bank_is_charged_and_every_claim_is_found(bank: Bank, topic: str) -> None:
    problems = consistency.check(bank, [q.id for q in bank.questions.values() if q.topic == topic])
    assert not problems, f"{len(problems)} problem(s) (scripts/rubric_check.py lists them):\n" + "\n".join(
        map(str, problems[:40])
    )
