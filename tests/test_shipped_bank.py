"""The shipped bank: validates, holds every seed item verbatim, and the pinned counts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.bank import Bank, default_bank_path
from bot.bank.markdown import to_html, visible_length
from tests.conftest import SEEDS, shipped_bank

DL_SEED = "003_7a6bc594e0441dd9.txt"
CP_SEED = "000_c12adfc75013baf0.txt"
DL_SECTIONS = {
    "Общее": "general",
    "Transformer": "transformer",
    "Ускорение Transformer": "speedup",
    "LoRA": "lora",
    "Распределённое обучение": "distributed",
    "Практические": "practical",
}
CHECKPOINTS_LINKS = [
    "q33",
    "q34",
    "q35",
    "q43",
    "q56",
    "q82",
    "q276",
    "q426",
    "q461",
    "q463",
    "q465",
    "q467",
    "q469",
    "q470",
    "q472",
    "q474",
    "q480",
    "q485",
    "q524",
    "q586",
    "q636",
    "q748",
    "q756",
    "q770",
    "q773",
    "q790",
    "q896",
    "t13",
    "t14",
    "t18",
    "t51",
    "t56",
    "t73",
    "t91",
    "t95",
    "t110",
    "t215",
    "t244",
]


@pytest.fixture(scope="module")
def bank() -> Bank:
    return shipped_bank()


def test_counts(bank: Bank) -> None:
    seed = [q for q in bank.questions.values() if q.source_file in (DL_SEED, CP_SEED)]
    assert len([q for q in seed if q.source_file == DL_SEED]) == 68
    numbered = [q for q in seed if q.source_file == CP_SEED]
    assert len([q for q in numbered if q.kind == "question"]) == 27
    assert len([q for q in numbered if q.kind == "task"]) == 11
    assert len(bank.terms) >= 30
    for q in seed:
        assert q.answer.strip(), q.id
        assert 3 <= len(q.key_points) <= 6, q.id
        assert q.terms, q.id


def test_the_deeper_bank(bank: Bank) -> None:
    """Issue 16: 200+ items, 100+ written for the bank (20+ of them coding tasks), every answer a
    chat-sized card with details, every question with 2-3 follow-ups; new items have the seed
    items' rubric (key points with a core one, misconceptions)."""
    items = list(bank.questions.values())
    originals = [q for q in items if q.original]
    assert len(items) >= 200
    assert len(originals) >= 100
    assert len([q for q in originals if q.topic == "coding" and q.kind == "task"]) >= 20
    seed_numbers = [q.number for q in items if not q.original and q.number is not None and q.kind == "question"]
    for q in items:
        assert len(q.answer) <= 900 and q.details, q.id
        assert 2 <= len(q.follow_ups) <= 3 and all(len(f.answer) <= 400 for f in q.follow_ups), q.id
    for q in originals:
        assert q.source_file is None and q.number is not None, q.id
        assert q.number > (max(seed_numbers) if q.kind == "question" else 244), q.id  # after the seed's
        assert any(kp.core for kp in q.key_points) and 2 <= len(q.misconceptions) <= 8, q.id
        assert q.terms and all(q.id in bank.terms[t].questions for t in q.terms), q.id  # linked both ways
    topics = {q.topic for q in originals}
    assert {"scaling", "checkpoints", "serving", "post-training", "evaluation", "coding"} <= topics


def test_checkpoints_links_exactly_the_seed_items(bank: Bank) -> None:
    """The seed's 38 links stay, in order; any further link is a question written for the bank, and
    every new question of the checkpoints topic links the term."""
    term = bank.term("checkpoints")
    assert term is not None
    assert list(term.questions[: len(CHECKPOINTS_LINKS)]) == CHECKPOINTS_LINKS
    for qid in term.questions[len(CHECKPOINTS_LINKS) :]:
        q = bank.question(qid)
        assert q is not None and q.original, qid  # a question written for the bank, not a seed item
    topic = {q.id for q in bank.questions.values() if q.topic == "checkpoints"}
    assert topic and topic <= set(term.questions)
    definition = term.definition.lower()
    assert "актив" in definition and ("сбо" in definition or "возобнов" in definition)


def test_numbered_items_are_reachable_by_number(bank: Bank) -> None:
    q = bank.resolve("463")
    assert q is not None and q.text.startswith("Что такое activation recomputation")
    task = bank.resolve("t56")
    assert task is not None and task.kind == "task" and "PLANNER" in task.text
    assert bank.resolve("56") is not None and bank.resolve("56") != task


def test_answers_are_substantial_and_fit_a_message(bank: Bank) -> None:
    for q in bank.questions.values():
        assert len(q.answer) >= 350, f"{q.id}: answer is a one-liner"
        assert visible_length(to_html(q.answer)) + len(q.text) < 4096, q.id
        for kp in q.key_points:
            assert kp.match, q.id


def _seed_items() -> list[tuple[str, str, int | None, str]]:
    """(seed file, section, number, text) for every item in both seeds."""
    items: list[tuple[str, str, int | None, str]] = []
    section = ""
    for line in (SEEDS / DL_SEED).read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if stripped in DL_SECTIONS:
            section = stripped
        elif stripped.startswith("• "):
            items.append((DL_SEED, section, None, stripped[2:]))
    section = ""
    for line in (SEEDS / CP_SEED).read_text(encoding="utf-8").splitlines():
        if line.strip() in ("Где встречается", "Практика", "- Практика"):
            section = "Практика" if "Практика" in line else "Где встречается"
            continue
        m = re.match(r"^- (\d+)\. (.+)$", line)
        if m:
            items.append((CP_SEED, section, int(m.group(1)), m.group(2)))
    return items


@pytest.mark.skipif(not SEEDS.exists(), reason="seed documents not present (../shared/seeds)")
def test_every_seed_line_is_in_the_bank_verbatim(bank: Bank) -> None:
    items = _seed_items()
    assert len(items) == 106
    texts = {(q.source_file, q.text): q for q in bank.questions.values()}
    for seed, section, number, text in items:
        q = texts.get((seed, text))
        assert q is not None, f"missing verbatim: {text!r}"
        assert q.source_section == section, q.id
        assert q.number == number, q.id
        if seed == DL_SEED:
            assert q.topic == DL_SECTIONS[section]
        else:
            assert q.kind == ("task" if section == "Практика" else "question"), q.id


def test_bank_path_works_outside_the_source_tree() -> None:
    path = default_bank_path()
    assert (path / "topics.yaml").exists()
    assert isinstance(path, Path)
