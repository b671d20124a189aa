"""The shipped bank's grading rubric holds up against the bank's own reference answers.

- every question has 2-8 misconceptions and 1-3 core key points;
- its reference answer covers every key point, reverses none and makes none of its misconceptions;
- every misconception is detected in its own claim;
- (tests/test_bank_consistency.py: no correct text of the bank draws a charge or a reversal);
- no key point is covered by more than 10% of the OTHER questions' reference answers (match phrases
  specific to their point, not to the topic).
"""

from __future__ import annotations

import pytest

from bot.bank import Bank
from bot.core.grading import grade, matcher_for
from bot.core.matching import Hit
from tests.conftest import shipped_bank

MAX_SHARE = 0.10


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


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


@pytest.mark.slow  # every key point against every other card of the 443-item bank: ~9 s
def test_key_points_are_specific_to_their_question(bank: Bank) -> None:
    matcher = matcher_for(bank.lexicon)
    questions = list(bank.questions.values())
    answers = {q.id: matcher.tokens(q.answer) for q in questions}
    # which answers hold a key at all: a phrase is tried only where its first word can stand
    holding: dict[str, set[str]] = {}
    for qid, text in answers.items():
        for key in text.index:
            holding.setdefault(key, set()).add(qid)

    def covers(phrase: str, qid: str) -> bool:
        return matcher.find(phrase, answers[qid]) is Hit.MATCH

    generic = []
    for q in questions:
        for i, kp in enumerate(q.key_points):
            found: set[str] = set()
            for phrase in kp.match:
                first = matcher.phrase(phrase)[:1]
                keys = (first[0].long | first[0].short) if first else frozenset()
                maybe = set().union(*(holding.get(k, ()) for k in keys)) - found - {q.id}
                found |= {o for o in maybe if covers(phrase, o)}
            others = len(found)
            share = others / (len(questions) - 1)
            if share > MAX_SHARE:
                generic.append((q.id, i, f"{share:.0%}"))
    assert not generic, f"key points covered by more than {MAX_SHARE:.0%} of other answers: {generic}"
