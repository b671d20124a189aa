"""The shipped bank's grading rubric holds up against the bank's own reference answers.

- every question has 2-8 misconceptions and 1-3 core key points;
- its reference answer covers every key point, reverses none and makes none of its misconceptions;
- every misconception is detected in its own claim;
- no correct text of the bank (card, details and their code comments, follow-up answers) draws a charge
  or a reversal, from its own question or any other question of its topic (issue 28);
- no key point is covered by more than 10% of the OTHER questions' reference answers (match phrases
  specific to their point, not to the topic).
"""

from __future__ import annotations

import pytest

from bot.bank import Bank, default_bank_path, load_bank
from bot.core import consistency
from bot.core.grading import grade, matcher_for
from bot.core.matching import Hit

MAX_SHARE = 0.10


@pytest.fixture(scope="module")
def bank() -> Bank:
    return load_bank(default_bank_path())


def test_every_question_has_a_rubric(bank: Bank) -> None:
    bad = []
    for q in bank.questions.values():
        core = sum(kp.core for kp in q.key_points)
        if not 2 <= len(q.misconceptions) <= 8 or not 1 <= core <= 3:
            bad.append((q.id, len(q.misconceptions), core))
    assert not bad, f"(question, misconceptions, core points) outside 2-8 / 1-3: {bad}"
    assert len(bank.lexicon.synonyms) >= 100 and len(bank.lexicon.antonyms) >= 10


def test_reference_answers_grade_as_correct_and_make_no_listed_mistake(bank: Bank) -> None:
    problems = []
    for q in bank.questions.values():
        g = grade(q, q.answer, bank.lexicon)
        if g.missed or g.contradicted or g.misconceptions or g.verdict != "good":
            problems.append((q.id, g.missed, g.contradicted, g.misconceptions, g.score))
    assert not problems, f"(question, missed, reversed, misconceptions, score): {problems}"


TOPICS = sorted({q.topic for q in load_bank(default_bank_path()).questions.values()})


@pytest.mark.parametrize("topic", TOPICS)  # one test per topic: the workers share the ~20 s of CPU
def test_no_correct_text_of_the_bank_is_charged_and_every_claim_is_found(bank: Bank, topic: str) -> None:
    problems = consistency.check(bank, [q.id for q in bank.questions.values() if q.topic == topic])
    assert not problems, f"{len(problems)} problem(s) (scripts/rubric_check.py lists them):\n" + "\n".join(
        map(str, problems[:40])
    )


def test_key_points_are_specific_to_their_question(bank: Bank) -> None:
    matcher = matcher_for(bank.lexicon)
    questions = list(bank.questions.values())
    answers = {q.id: matcher.tokens(q.answer) for q in questions}
    generic = []
    for q in questions:
        for i, kp in enumerate(q.key_points):
            others = sum(1 for o in questions if o.id != q.id and matcher.best(kp.match, answers[o.id]) is Hit.MATCH)
            share = others / (len(questions) - 1)
            if share > MAX_SHARE:
                generic.append((q.id, i, f"{share:.0%}"))
    assert not generic, f"key points covered by more than {MAX_SHARE:.0%} of other answers: {generic}"
