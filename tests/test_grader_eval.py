"""Measure the offline grader on the labelled answers in ``tests/fixtures/grader_set.yaml``.

The file holds answers to 40 bank questions — strong, concise, partial, fluent-but-wrong, off-topic
(and, for the first 12 questions, empty and keyword lists) — each scored 0..100 by an expert and split
into ``dev`` (tuning) and ``test`` (never tuned on; see the rule at the top of the file). These tests
assert the issue's targets on the test split and sanity bars on dev; ``pytest -s`` prints both reports.
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from pathlib import Path
from statistics import mean

import pytest
import yaml

from bot.bank import Bank
from bot.cli.grading import report
from bot.core import evaluation
from bot.core.grading import grade
from tests.conftest import shipped_bank

FIXTURE = Path(__file__).parent / "fixtures" / "grader_set.yaml"
KINDS = {"strong", "concise", "partial", "fluent_wrong", "off_topic", "empty", "stuffed"}
FIRST_SET = {"q463", "general-01", "transformer-13", "lora-05", "lora-10", "speedup-08", "speedup-09",
             "distributed-04", "practical-01", "practical-08", "q472", "q43"}  # fmt: skip

Row = tuple[str, str, float, float]


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


@pytest.fixture(scope="module")
def data() -> list[dict[str, object]]:
    loaded = yaml.safe_load(FIXTURE.read_text(encoding="utf-8"))
    assert isinstance(loaded, list)
    return loaded


def _rows(bank: Bank, data: list[dict[str, object]], split: str) -> list[Row]:
    rows: list[Row] = []
    for entry in data:
        if entry["split"] != split:
            continue
        q = bank.question(str(entry["question"]))
        assert q is not None
        for a in entry["answers"]:  # type: ignore[attr-defined]
            g = grade(q, a["text"] or "", bank.lexicon)
            rows.append((q.id, a["kind"], float(a["score"]), 100 * g.score))
    return rows


def test_the_set_is_well_formed_and_split_by_its_rule(bank: Bank, data: list[dict[str, object]]) -> None:
    kinds: Counter[str] = Counter()
    for entry in data:
        qid = str(entry["question"])
        q = bank.question(qid)
        assert q is not None, f"unknown question {qid}"
        rule = "dev" if qid in FIRST_SET or zlib.crc32(qid.encode()) % 2 == 0 else "test"
        assert entry["split"] == rule, f"{qid}: split {entry['split']} breaks the rule ({rule})"
        for a in entry["answers"]:  # type: ignore[attr-defined]
            assert a["kind"] in KINDS, a["kind"]
            assert 0 <= a["score"] <= 100
            assert all(0 <= i < len(q.key_points) for i in a["covered"]), f"{qid}/{a['kind']}"
            kinds[a["kind"]] += 1
    assert len(data) == 40
    assert min(kinds[k] for k in ("strong", "concise", "partial", "fluent_wrong", "off_topic")) == 40


def _mean(rows: list[Row], kind: str) -> float:
    return mean(p for _, k, _, p in rows if k == kind)


def _strong_wins(rows: list[Row]) -> float:
    strong = {q: p for q, k, _, p in rows if k == "strong"}
    wrong = {q: p for q, k, _, p in rows if k == "fluent_wrong"}
    both = [q for q in strong if q in wrong]
    return sum(strong[q] > wrong[q] for q in both) / len(both)


def test_dev_split(bank: Bank, data: list[dict[str, object]]) -> None:
    rows = _rows(bank, data, "dev")
    print("\n" + report(rows, "dev split (tuned on)"))
    expert, predicted = [r[2] for r in rows], [r[3] for r in rows]
    assert evaluation.spearman(expert, predicted) >= 0.80
    assert evaluation.macro_f1(evaluation.per_class(expert, predicted)) >= 0.75
    assert _mean(rows, "fluent_wrong") <= 35 and _mean(rows, "concise") >= 70
    assert _strong_wins(rows) >= 0.9
    assert _mean(rows, "off_topic") <= 15
    assert _mean(rows, "stuffed") <= 40
    assert _mean(rows, "empty") <= 5


def test_test_split_meets_the_targets(bank: Bank, data: list[dict[str, object]]) -> None:
    """Issue 12's targets on answers the grader was not tuned on (the strong-above-wrong target of
    90% is not met yet: 12/14; the floor below keeps it from slipping)."""
    rows = _rows(bank, data, "test")
    print("\n" + report(rows, "test split (never tuned on)"))
    expert, predicted = [r[2] for r in rows], [r[3] for r in rows]
    assert evaluation.spearman(expert, predicted) >= 0.70
    assert evaluation.macro_f1(evaluation.per_class(expert, predicted)) >= 0.65
    assert _mean(rows, "fluent_wrong") <= 40
    assert _mean(rows, "concise") >= 65
    assert _strong_wins(rows) >= 0.75


EXTRA = Path(__file__).parent / "fixtures" / "grader_extra_dev.jsonl"


def test_extra_dev_answers_to_every_question(bank: Bank) -> None:
    """``grader_extra_dev.jsonl``: a strong, a concise and a fluent-wrong answer to each of the 106
    bank items, written by independent writers who never saw the rubric (labelled by kind, no expert
    score). It was used to find rubric gaps, so it is dev data: this guards against regressions.
    New (original) questions have their own dev files in ``grader_new_dev/``."""
    lines = [json.loads(line) for line in EXTRA.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert {o["question"] for o in lines} == {q.id for q in bank.questions.values() if not q.original}
    scores: dict[str, dict[str, float]] = {}
    for o in lines:
        q = bank.question(o["question"])
        assert q is not None
        scores.setdefault(o["kind"], {})[q.id] = 100 * grade(q, o["answer"], bank.lexicon).score
    strong, concise, wrong = scores["strong"], scores["concise"], scores["fluent_wrong"]
    print(f"\nextra dev: strong {mean(strong.values()):.1f}, concise {mean(concise.values()):.1f}, "
          f"fluent wrong {mean(wrong.values()):.1f}")  # fmt: skip
    # fluent wrong answers stay "weak" on average; a slip on a side detail now costs "partial" at most
    # (issue 28), so their mean is no longer pinned near the 18 of a core error
    assert mean(strong.values()) >= 90 and mean(concise.values()) >= 80 and mean(wrong.values()) <= 32
    assert sum(strong[q] > wrong[q] for q in strong) / len(strong) >= 0.95


NEW_DEV = Path(__file__).parent / "fixtures" / "grader_new_dev"


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_dev_answers_to_every_new_question(bank: Bank) -> None:
    """``grader_new_dev/<topic>.jsonl``: a strong, a concise and a fluent-wrong answer to each question
    written for the bank (``source: {kind: original}``), by the question's writer while building its
    rubric: dev data, the same bars as the seed items' extra dev set, per topic."""
    originals = {q.id for q in bank.questions.values() if q.original}
    lines = [
        json.loads(line)
        for path in sorted(NEW_DEV.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert {o["question"] for o in lines} == originals
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for o in lines:
        q = bank.question(o["question"])
        assert q is not None
        scores.setdefault(q.topic, {}).setdefault(o["kind"], {})[q.id] = 100 * grade(q, o["answer"], bank.lexicon).score
    for topic, by_kind in sorted(scores.items()):
        strong, concise, wrong = by_kind["strong"], by_kind["concise"], by_kind["fluent_wrong"]
        print(f"\nnew dev {topic}: strong {mean(strong.values()):.1f}, concise {mean(concise.values()):.1f}, "
              f"fluent wrong {mean(wrong.values()):.1f} ({len(strong)} questions)")  # fmt: skip
        assert mean(strong.values()) >= 90 and mean(concise.values()) >= 75 and mean(wrong.values()) <= 25, topic
        assert sum(strong[q] > wrong[q] for q in strong) / len(strong) >= 0.95, topic
