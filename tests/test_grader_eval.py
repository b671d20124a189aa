"""Measure the key-point grader on a hand-labelled set of answers (issue 6).

``tests/fixtures/grader_set.yaml`` holds answers we wrote to 12 bank questions — good, partial,
off-topic, empty and keyword-stuffed — each labelled with the key points a human grader would count as
covered. Over every (answer, key point) pair we compare the grader's "covered" with the labels and
report precision and recall, plus the mean score per answer kind (``pytest -s`` prints the table).

Precision/recall are measured on prose answers (good, partial, off-topic, empty). A stuffed answer
names terms without explaining anything, so its labels are empty; the grader is *expected* to find its
terms and must instead discount the score and flag it — that is checked separately, and its
pair-level numbers are printed for information only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

import pytest
import yaml

from bot.bank import Question, default_bank_path, load_bank
from bot.core.grading import Grade, grade

FIXTURE = Path(__file__).parent / "fixtures" / "grader_set.yaml"
KINDS = ("good", "partial", "off_topic", "empty", "stuffed")
PROSE_KINDS = ("good", "partial", "off_topic", "empty")
SENTENCE_KINDS = ("good", "partial")

MIN_PRECISION = 0.85
MIN_RECALL = 0.6
MAX_LOW_SCORE = 0.2  # off-topic and empty answers
MAX_STUFFED_SCORE = 0.5


@dataclass(frozen=True, slots=True)
class Case:
    question: Question
    kind: str
    text: str
    labels: frozenset[int]
    grade: Grade

    @property
    def name(self) -> str:
        return f"{self.question.id}/{self.kind}"


@dataclass(frozen=True, slots=True)
class Counts:
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def _load_cases() -> list[Case]:
    bank = load_bank(default_bank_path())
    raw = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    cases: list[Case] = []
    for entry in raw:
        question = bank.question(entry["question"])
        assert question is not None, f"unknown question id {entry['question']!r} in {FIXTURE.name}"
        kinds = [a["kind"] for a in entry["answers"]]
        assert sorted(kinds) == sorted(KINDS), f"{question.id}: expected one answer of each kind, got {kinds}"
        for answer in entry["answers"]:
            labels = frozenset(answer["covered"])
            bad = [i for i in labels if not 0 <= i < len(question.key_points)]
            assert not bad, f"{question.id}/{answer['kind']}: key point index out of range: {bad}"
            text = answer["text"] or ""
            cases.append(Case(question, answer["kind"], text, labels, grade(question, text)))
    return cases


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return _load_cases()


def _counts(cases: Iterable[Case]) -> Counts:
    tp = fp = fn = 0
    for c in cases:
        predicted = set(c.grade.covered)
        tp += len(predicted & c.labels)
        fp += len(predicted - c.labels)
        fn += len(c.labels - predicted)
    return Counts(tp, fp, fn)


def _of_kind(cases: list[Case], *kinds: str) -> list[Case]:
    return [c for c in cases if c.kind in kinds]


def _report(cases: list[Case]) -> str:
    lines = ["", "Grader evaluation (tests/fixtures/grader_set.yaml)", ""]
    lines.append(f"{'answers':<24}{'pairs':>6}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}")
    for title, subset in (
        ("prose (asserted)", _of_kind(cases, *PROSE_KINDS)),
        ("stuffed (info)", _of_kind(cases, "stuffed")),
        ("all (info)", cases),
    ):
        k = _counts(subset)
        pairs = sum(len(c.question.key_points) for c in subset)
        lines.append(f"{title:<24}{pairs:>6}{k.tp:>5}{k.fp:>5}{k.fn:>5}{k.precision:>11.3f}{k.recall:>8.3f}")
    lines += ["", f"{'kind':<12}{'n':>3}{'coverage':>10}{'score':>8}{'min':>7}{'max':>7}{'stuffed':>9}"]
    for kind in KINDS:
        subset = _of_kind(cases, kind)
        scores = [c.grade.score for c in subset]
        lines.append(
            f"{kind:<12}{len(subset):>3}{mean(c.grade.coverage for c in subset):>10.3f}"
            f"{mean(scores):>8.3f}{min(scores):>7.3f}{max(scores):>7.3f}"
            f"{sum(c.grade.stuffed for c in subset):>9}"
        )
    lines += ["", "Disagreements on prose answers (FN = labelled covered, grader missed; FP = the reverse):"]
    for c in _of_kind(cases, *PROSE_KINDS):
        predicted = set(c.grade.covered)
        for tag, points in (("FN", c.labels - predicted), ("FP", predicted - c.labels)):
            for i in sorted(points):
                lines.append(f"  {tag} {c.name:<26} #{i} {c.question.key_points[i].text}")
    return "\n".join(lines)


def test_precision_and_recall_of_covered(cases: list[Case]) -> None:
    print(_report(cases))
    k = _counts(_of_kind(cases, *PROSE_KINDS))
    assert k.precision >= MIN_PRECISION, f"precision {k.precision:.3f} < {MIN_PRECISION}"
    assert k.recall >= MIN_RECALL, f"recall {k.recall:.3f} < {MIN_RECALL}"


def test_stuffed_answers_are_flagged_and_discounted(cases: list[Case]) -> None:
    stuffed = _of_kind(cases, "stuffed")
    assert len(stuffed) == len({c.question.id for c in cases})
    not_flagged = [c.name for c in stuffed if not c.grade.stuffed]
    assert not not_flagged, f"keyword lists not flagged as stuffed: {not_flagged}"
    too_high = [(c.name, c.grade.score) for c in stuffed if c.grade.score >= MAX_STUFFED_SCORE]
    assert not too_high, f"keyword lists scoring >= {MAX_STUFFED_SCORE}: {too_high}"


def test_good_answer_beats_keyword_list(cases: list[Case]) -> None:
    losers = []
    for qid in {c.question.id for c in cases}:
        mine = [c for c in cases if c.question.id == qid]
        for good in _of_kind(mine, "good"):
            for stuffed in _of_kind(mine, "stuffed"):
                if good.grade.score <= stuffed.grade.score:
                    losers.append((qid, good.grade.score, stuffed.grade.score))
    assert not losers, f"good answer not above the keyword list (question, good, stuffed): {losers}"


def test_off_topic_and_empty_answers_score_low(cases: list[Case]) -> None:
    high = [(c.name, c.grade.score) for c in _of_kind(cases, "off_topic", "empty")]
    high = [(name, score) for name, score in high if score > MAX_LOW_SCORE]
    assert not high, f"off-topic/empty answers scoring > {MAX_LOW_SCORE}: {high}"


def test_sentences_are_not_flagged_stuffed(cases: list[Case]) -> None:
    flagged = [c.name for c in _of_kind(cases, *SENTENCE_KINDS) if c.grade.stuffed]
    assert not flagged, f"prose answers flagged as keyword stuffing: {flagged}"
