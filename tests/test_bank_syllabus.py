"""The bank's shape (issue #30): syllabus areas with targets, linked near-duplicates that are never
asked back to back or both in one interview, a handle for every item, context lines."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.bank import Bank, load_bank
from bot.cli import main
from bot.core import interview as core_interview
from bot.core.picking import candidates_for, not_after, pick
from bot.core.similarity import THRESHOLD, near_duplicates, unlinked
from bot.db import chat_store
from bot.db import interviews as interview_store
from bot.db.engine import Database
from bot.services import asking, interviews
from bot.services.deps import Deps
from bot.tg.views import answer_views, question_view
from tests.conftest import shipped_bank, shipped_catalog
from tests.test_bank_loader import GLOSSARY, make_bank, problems, question

BANK: Bank = shipped_bank()
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
USER = 7
# Turn on once the writers' items are merged: every area at or above its target, 400+ items.
COUNTS_STRICT = True
MIN_TOTAL = 400

AREAS = """\
areas:
  - {id: basics, title: {ru: "Основы", en: "Basics"}, order: 1, target: 2}
  - {id: llm, title: {ru: "LLM", en: "LLM"}, order: 2, target: 5}
topics:
  - id: lora
    title: {ru: "LoRA", en: "LoRA"}
    order: 1
    area: llm
  - id: misc
    title: {ru: "Разное", en: "Misc"}
    order: 2
    area: basics
"""


def bank_dir(tmp_path: Path, questions: str, topics: str = AREAS) -> Path:
    return make_bank(tmp_path, questions, glossary=GLOSSARY, topics=topics)


# -- the syllabus -------------------------------------------------------------------------------


def test_every_shipped_topic_and_item_belongs_to_an_area() -> None:
    assert len(BANK.areas) >= 17
    for topic in BANK.topics:
        assert BANK.area(topic.area or "") is not None, f"topic {topic.id} has no area"
    in_areas = [qid for area in BANK.areas for qid in BANK.area_question_ids(area.id)]
    assert sorted(in_areas) == sorted(BANK.questions)  # every item once, through its topic


def test_area_targets_follow_the_syllabus() -> None:
    targets = {a.id: a.target for a in BANK.areas}
    assert targets["tokenization"] == 6
    assert all(t >= 10 for a, t in targets.items() if a != "tokenization"), targets
    syllabus = (Path(__file__).resolve().parents[1] / "docs" / "syllabus.md").read_text(encoding="utf-8")
    for area in BANK.areas:  # the document lists every area with its target
        assert f"`{area.id}`" in syllabus and f"| {area.target} |" in syllabus, area.id


def test_validate_prints_counts_per_area_and_warns_below_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = bank_dir(tmp_path, question("q1") + question("q2", number="2") + question("q3", number="3", topic="misc"))
    assert main(["validate", str(path)]) == 0  # below target is a warning, not a failure
    out = capsys.readouterr().out
    assert "basics                1 / 2    below  Basics" in out
    assert "llm                   2 / 5    below  LLM" in out
    assert "total                 3 / 7" in out
    assert out.rstrip().endswith("warning: 2 area(s) below target: basics 1/2, llm 2/5")


def test_unknown_area_and_unknown_link_name_file_and_line(tmp_path: Path) -> None:
    topics = AREAS.replace("    area: basics", "    area: basic")
    qs = question("q1", same_as="[q2, q9]") + question("q2", number="2", overlaps="[q2]")
    found = problems(bank_dir(tmp_path, qs, topics))
    assert found == [
        "questions.yaml:10: question 'q1': same_as names unknown question 'q9'",
        "questions.yaml:23: question 'q2': overlaps names the question itself",
        "topics.yaml:2: area 'basics' has no topics (give a topic 'area: basics')",
        "topics.yaml:12: topic 'misc': unknown area 'basic' (did you mean 'basics'?)",
    ]


def test_links_are_symmetric_when_loaded(tmp_path: Path) -> None:
    qs = question("q1", same_as="[q2]") + question("q2", number="2") + question("q3", number="3", overlaps="[q1, Q2]")
    bank = load_bank(bank_dir(tmp_path, qs))
    assert bank.question("q1").same_as == ("q2",) and bank.question("q1").overlaps == ("q3",)  # type: ignore[union-attr]
    assert bank.question("q2").same_as == ("q1",) and bank.question("q2").overlaps == ("q3",)  # type: ignore[union-attr]
    assert bank.linked("q3") == ("q1", "q2")


# -- duplicates ---------------------------------------------------------------------------------


def test_no_unlinked_near_identical_questions() -> None:
    """TF-IDF cosine over lemmas of the question texts (bot/core/similarity.py) >= 0.8 needs a link."""
    found = unlinked(BANK, near_duplicates(BANK))
    assert not found, "link these near-identical items (same_as / overlaps): " + "; ".join(
        f"{a} ~ {b} ({s:.2f})" for a, b, s in found
    )


def test_the_measure_sees_a_reworded_duplicate(tmp_path: Path) -> None:
    qs = (
        question("q1", text='"Что такое LoRA и зачем она нужна?"')
        + question("q2", number="2", text='"Что такое LoRA? Зачем нужна LoRA?"')
        + question("q3", number="3", text='"Как шардирует состояние оптимизатора ZeRO-3?"')
    )
    bank = load_bank(bank_dir(tmp_path, qs))
    pairs = near_duplicates(bank)
    assert [(a, b) for a, b, _ in pairs] == [("q1", "q2")] and pairs[0][2] >= THRESHOLD
    linked = load_bank(bank_dir(tmp_path, qs.replace("  - id: q2\n", "  - id: q2\n    same_as: [q1]\n")))
    assert unlinked(linked, near_duplicates(linked)) == []


def test_the_issue_duplicates_are_linked() -> None:
    pairs = [
        ("lora-04", "lora-06"), ("transformer-10", "transformer-15"), ("q463", "q465"), ("q463", "q480"),
        ("speedup-02", "q474"), ("transformer-01", "transformer-11"), ("distributed-01", "q426"),
        ("practical-08", "practical-10"), ("general-05", "practical-06"), ("scaling-15", "serving-18"),
        ("serving-09", "speedup-04"), ("eval-03", "eval-22"), ("post-05", "post-13"),
    ]  # fmt: skip
    for a, b in pairs:
        assert b in BANK.linked(a) and a in BANK.linked(b), (a, b)
    attention = ["transformer-02", "transformer-03", "transformer-12", "transformer-18", "q276"]
    for a, b in itertools.combinations(attention, 2):
        assert b in BANK.linked(a), (a, b)


def test_an_interview_of_8_over_the_whole_bank_never_holds_two_linked_items() -> None:
    for seed in range(300):
        chosen = core_interview.choose(BANK, [], 8, random.Random(seed))
        assert len(chosen) == 8
        for a, b in itertools.combinations(chosen, 2):
            assert b not in BANK.linked(a), (seed, a, b)


def test_pick_passes_over_the_previous_questions_twins() -> None:
    rng = random.Random(5)
    avoid = not_after(BANK, "transformer-02")
    cluster = ["transformer-02", "transformer-03", "transformer-12", "q276", "transformer-05"]
    for _ in range(200):
        assert pick(cluster, {}, rng, avoid=avoid) == "transformer-05"
    assert pick(["transformer-03"], {}, rng, avoid=avoid) == "transformer-03"  # nothing else is left


def test_rounds_of_a_topic_never_repeat_and_never_put_twins_back_to_back() -> None:
    """/q lora fourteen times shows fourteen questions (CI once saw 13: the last unseen one was
    linked to the one just asked, and a seen one came instead). The pick near a round's end leaves
    an order with no twins side by side, so both promises hold on every topic of the bank."""
    for topic in BANK.topics:
        ids = candidates_for(BANK, topic.id)
        if not any(set(BANK.linked(qid)) & set(ids) for qid in ids):
            continue  # no twins within the topic
        for seed in range(20):
            rng = random.Random(seed)
            seen: Counter[str] = Counter()
            previous: str | None = None
            for turn in range(3 * len(ids)):
                qid = pick(ids, seen, rng, avoid=not_after(BANK, previous), linked=BANK.linked)
                assert qid is not None and seen[qid] == turn // len(ids), (topic.id, seed, turn, qid)
                assert previous is None or qid not in BANK.linked(previous), (topic.id, seed, previous, qid)
                seen[qid] += 1
                previous = qid


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    """Both backends (the push test runs the new last-question query on each)."""
    async for database in _database(db_url):
        yield database


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    """SQLite only, for what tests the choosing rather than the SQL (keeps the default run short)."""
    async for database in _database(f"sqlite:///{tmp_path / 'test.db'}"):
        yield database


async def _database(url: str) -> AsyncIterator[Database]:
    database = Database(url)
    await database.migrate()
    async with database.write() as session:
        await chat_store.upsert_user(session, chat_store.UserInfo(USER, "Anna", "anna", "ru"))
        await chat_store.upsert_chat(session, chat_store.ChatInfo(USER, "private"))
    yield database
    await database.close()


async def test_a_run_of_q_never_asks_linked_items_back_to_back(sqlite_db: Database) -> None:
    db = sqlite_db
    deps = Deps(db, rng=random.Random(11))
    previous = None
    for _ in range(30):  # practical: two linked clusters in ten questions, over three rounds
        choice = await asking.choose_next(deps, BANK, chat_id=USER, topic="practical", chat_filter=None)
        assert choice.question is not None
        if previous is not None:
            assert choice.question.id not in BANK.linked(previous), (previous, choice.question.id)
        await asking.record_ask(db, chat_id=USER, question_id=choice.question.id, user_id=USER, source="topic")
        previous = choice.question.id


async def test_interview_8_over_the_whole_bank_via_the_service(sqlite_db: Database) -> None:
    db = sqlite_db
    request = interviews.Request(size=8)
    for seed in range(5):
        deps = Deps(db, clock=lambda: NOW, rng=random.Random(seed))
        found = await interviews.start(deps, BANK, user_id=USER, chat_id=USER, request=request)
        assert found is not None
        async with db.read() as session:
            ids = [item.question_id for item in await interview_store.items(session, found.id)]
        assert len(ids) == 8
        assert not [(a, b) for a, b in itertools.combinations(ids, 2) if b in BANK.linked(a)]
        await interviews.finish(db, BANK, found, abandoned=True, now=NOW)


def test_the_reference_card_names_the_linked_item() -> None:
    ru = "\n".join(v.text for v in answer_views(BANK.questions["lora-04"], BANK, "ru"))
    assert "Похожий вопрос: <code>/q lora-6</code> · Какие слои обычно затрагивает LoRA" in ru
    en = "\n".join(v.text for v in answer_views(BANK.questions["q463"], BANK, "en"))
    assert "Similar question: <code>/q 465</code>" in en and "Similar question: <code>/q 480</code>" in en


# -- handles and context ------------------------------------------------------------------------


def test_every_item_has_a_handle_that_asks_it() -> None:
    handles = {q.label for q in BANK.questions.values()}
    assert len(handles) == len(BANK.questions)  # unique
    for q in BANK.questions.values():
        assert BANK.resolve(q.label) == q, q.id
        assert asking.resolve(shipped_catalog(), q.label).question == q, q.id
    assert BANK.resolve("lora-4") == BANK.resolve("lora-04") == BANK.questions["lora-04"]
    assert BANK.questions["q463"].label == "463" and BANK.questions["code-13"].label == "t313"


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_header_always_shows_the_handle(lang: str) -> None:
    word, reference = {"ru": ("Вопрос", "Эталонный ответ"), "en": ("Question", "Reference answer")}[lang]
    for qid, handle in [("lora-04", "lora-4"), ("general-01", "general-1"), ("q463", "463"), ("code-01", "t301")]:
        q = BANK.questions[qid]
        kind = {"ru": "Задача", "en": "Task"}[lang] if q.kind == "task" else word
        view = question_view(q, BANK, lang, group=False)
        assert view.text.startswith(f"<b>{kind} {handle}</b> · "), view.text[:60]
        head = answer_views(q, BANK, lang)[0].text.split("\n", 1)[0]
        assert head.startswith(f"<b>{reference}</b>") and head.endswith(f" · {kind} {handle}"), head


def test_items_that_lean_on_the_previous_one_have_a_context_line() -> None:
    leaning = [
        "distributed-01",
        "distributed-05",
        "lora-02",
        "lora-14",
        "transformer-06",
        "speedup-11",
        "transformer-10",
    ]
    for qid in leaning:
        assert BANK.questions[qid].context, qid
    view = question_view(BANK.questions["speedup-11"], BANK, "ru", group=False)
    assert "<i>Продолжение вопроса о батчевой обработке" in view.text


# -- the counts ---------------------------------------------------------------------------------


def test_every_area_reaches_its_target_and_the_bank_holds_400_items() -> None:
    """Pinned against the targets in data/topics.yaml. While the writers' items are still arriving
    it is an expected failure with the list of what is missing; ``COUNTS_STRICT = True`` makes it a
    hard check."""
    below = [f"{a.id} {n}/{a.target}" for a, n in BANK.area_counts() if n < a.target]
    total = len(BANK.questions)
    if (below or total < MIN_TOTAL) and not COUNTS_STRICT:
        pytest.xfail(f"under target until the new items are merged: {', '.join(below)}; {total}/{MIN_TOTAL} items")
    assert not below, below
    assert total >= MIN_TOTAL


async def test_the_daily_push_never_follows_a_question_with_its_twin(db: Database) -> None:
    """A group chat filtered to «practical» gets its daily question: never one linked to the last."""
    from datetime import date

    from bot.catalog import CatalogHolder
    from bot.config import Settings
    from bot.push.planner import Claim
    from bot.push.sender import PushService

    async with db.write() as session:
        await chat_store.upsert_chat(session, chat_store.ChatInfo(-100, "supergroup", "ML"))
    deps = Deps(db, rng=random.Random(2))
    push = PushService(None, deps, CatalogHolder(shipped_catalog()), Settings())  # type: ignore[arg-type]
    claim = Claim(1, -100, "supergroup", date(2026, 3, 2), NOW, "practical", "question", "ru")
    previous = None
    for _ in range(30):
        qid = await push._pick_question(claim)
        assert qid is not None and qid not in not_after(BANK, previous), (previous, qid)
        await asking.record_ask(db, chat_id=-100, question_id=qid, user_id=None, source="push")
        previous = qid
