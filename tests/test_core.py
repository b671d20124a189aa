"""The Telegram-free core: picking without repeats, search ranking, glossary lookup, rendering."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bot.bank.markdown import pack, render_blocks, to_html, to_plain, visible_length
from bot.core.picking import candidates_for, pick
from tests.conftest import shipped_catalog

CATALOG = shipped_catalog()
BANK = CATALOG.bank


def test_each_round_covers_every_candidate_exactly_once() -> None:
    rng = random.Random(3)
    ids = candidates_for(BANK, "transformer")
    seen: Counter[str] = Counter()
    for round_no in range(1, 4):
        picked = []
        for _ in ids:
            qid = pick(ids, seen, rng)
            assert qid is not None
            picked.append(qid)
            seen[qid] += 1
        assert sorted(picked) == sorted(ids), f"round {round_no} repeated a question"


def test_picking_is_uniform_among_the_least_seen() -> None:
    rng = random.Random(11)
    ids = ["a", "b", "c", "d"]
    seen = {"a": 2, "b": 1, "c": 1, "d": 3}
    counts = Counter(pick(ids, seen, rng) for _ in range(4000))
    assert set(counts) == {"b", "c"}
    assert abs(counts["b"] - counts["c"]) < 300


def test_tasks_are_not_asked_by_q_but_are_reachable() -> None:
    assert all(BANK.questions[q].kind == "question" for q in candidates_for(BANK, "ops"))
    assert "t13" in candidates_for(BANK, "ops", include_tasks=True)


def test_search_understands_morphology_and_transliteration() -> None:
    def top(query: str) -> list[str]:
        return [hit.question_id for hit in CATALOG.search.search(query, limit=3)]

    assert top("чекпоинт")[:2] == top("чекпоинтов")[:2] == top("checkpointing")[:2]
    assert "q465" in top("gradient checkpointing deepspeed")[:1]
    assert "speedup-04" in top("квантизация")  # with the coding task and the serving questions on it
    assert CATALOG.search.search("") == [] and CATALOG.search.search("zzzqqq") == []


def test_search_ranks_question_text_above_passing_mentions() -> None:
    hits = CATALOG.search.search("LoRA alpha")
    assert hits[0].question_id == "lora-11"  # «Какую роль играет параметр alpha в методе LoRA?»
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_glossary_lookup_exact_alias_and_did_you_mean() -> None:
    g = CATALOG.glossary
    exact = g.lookup("gradient checkpointing")
    assert exact[0].term.id == "checkpoints" and g.is_sure(exact)
    typo = g.lookup("flashatention")
    assert typo[0].term.id == "flashattention"
    vague = g.lookup("внимание маска")
    assert vague and not g.is_sure(vague)
    part = g.lookup("сет")  # three letters inside a longer alias: a guess, not the term
    assert part and not g.is_sure(part)
    assert g.lookup("квантизация")[0].term.id == "quantization"
    assert g.lookup("") == []


@pytest.mark.parametrize(("typed", "term"), [("рлхф", "RLHF"), ("СФТ", "SFT"), ("ппо", "RLHF"), ("дпо", "DPO")])
def test_an_acronym_typed_in_cyrillic_letters_finds_its_term(typed: str, term: str) -> None:
    """«ппо» used to be answered, sure of itself, with MQA / GQA."""
    g = CATALOG.glossary
    found = g.lookup(typed)
    assert found[0].term.term_en == term and found[0].score == 100 and g.is_sure(found)
    assert g.lookup("квантизация")[0].term.id == "quantization"  # a Russian word is still itself
    assert all(m.term.term_en != "DPO" or m.score < 100 for m in g.lookup("кто"))  # «who», not KTO


def test_markdown_renders_to_telegram_html_and_plain_text() -> None:
    md = (
        "Формула: softmax(QKᵀ/√d_k)·V, **важно** и _курсив_, `code <x>`\n\n- пункт\n1. шаг\n\n```python\na < b & c\n```"
    )
    html = to_html(md)
    assert "<b>важно</b>" in html and "<i>курсив</i>" in html and "<code>code &lt;x&gt;</code>" in html
    assert "d_k" in html and "<i>k" not in html  # snake_case is not italic
    assert "• пункт" in html and "1. шаг" in html
    assert '<pre><code class="language-python">a &lt; b &amp; c</code></pre>' in html
    assert "**" not in to_plain(md) and "a < b & c" in to_plain(md)


def test_splitting_only_when_it_cannot_fit_and_never_inside_a_tag() -> None:
    blocks = render_blocks("\n\n".join(f"**Абзац {i}** " + "слово " * 60 for i in range(30)))
    messages = pack(blocks, 4096)
    assert len(messages) > 1
    assert all(visible_length(m) <= 4096 for m in messages)
    assert all(m.count("<b>") == m.count("</b>") for m in messages)
    short = pack(render_blocks("один\n\nдва"), 4096)
    assert len(short) == 1


def test_numbers_take_the_russian_form_they_need() -> None:
    from bot.i18n import counted

    assert counted(202, "questions", "ru") == "202 вопроса"
    assert counted(211, "questions", "ru") == "211 вопросов"
    assert counted(41, "tasks", "ru") == "41 практическая задача"
    assert counted(44, "tasks", "ru") == "44 практические задачи"
    assert counted(18, "topics_dative", "ru") == "18 темам" and counted(21, "topics_dative", "ru") == "21 теме"
    assert counted(125, "terms_genitive", "ru") == "125 терминов" and counted(1, "terms_genitive", "ru") == "1 термина"
    assert counted(1, "questions", "en") == "1 question" and counted(41, "tasks", "en") == "41 practice tasks"
