"""The bank loader and validator: a good bank loads; each broken bank names file:line."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from bot.bank import BankError, default_bank_path, load_bank
from bot.cli import main

TOPICS = """\
topics:
  - id: lora
    title: {ru: "LoRA", en: "LoRA"}
    order: 1
"""

GLOSSARY = """\
glossary:
  - id: lora
    term: {en: "LoRA", ru: "LoRA"}
    aliases: ["low-rank adaptation", "лора"]
    definition: "Низкоранговая добавка к весам."
"""


def question(qid: str = "q1", **overrides: str) -> str:
    fields = {
        "id": qid,
        "number": "1",
        "kind": "question",
        "topic": "lora",
        "difficulty": "2",
        "text": '"Что такое LoRA?"',
        "terms": "[lora]",
        "answer": '"LoRA добавляет к замороженным весам произведение BA ранга r."',
    }
    fields.update(overrides)
    lines = [f"  - id: {fields.pop('id')}"]
    lines += [f"    {k}: {v}" for k, v in fields.items() if v != "<drop>"]
    if "key_points" not in overrides:
        lines.append("    key_points:")
        for word in ("ранг", "замороз", "слияние"):
            lines.append(f'      - {{text: "{word}", match: ["{word}"]}}')
    return "\n".join(lines) + "\n"


def make_bank(tmp_path: Path, questions: str, *, glossary: str = GLOSSARY, topics: str = TOPICS) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "topics.yaml").write_text(topics, encoding="utf-8")
    (tmp_path / "glossary.yaml").write_text(glossary, encoding="utf-8")
    (tmp_path / "questions.yaml").write_text("questions:\n" + questions, encoding="utf-8")
    return tmp_path


def problems(path: Path) -> list[str]:
    with pytest.raises(BankError) as info:
        load_bank(path)
    return [f"{Path(p.file).name}:{p.line}: {p.message}" for p in info.value.problems]


def test_good_bank_loads_with_indexes(tmp_path: Path) -> None:
    bank = load_bank(make_bank(tmp_path, question("q1") + question("t1", kind="task")))
    assert bank.resolve("1").id == "q1"  # type: ignore[union-attr]
    assert bank.resolve("t1").id == "t1"  # type: ignore[union-attr]
    assert bank.term("lora").questions == ("q1", "t1")  # type: ignore[union-attr]
    assert bank.topic_question_ids("lora") == ("q1", "t1")
    with pytest.raises(TypeError):
        bank.questions["x"] = bank.questions["q1"]  # type: ignore[index]


def test_duplicate_id_and_number(tmp_path: Path) -> None:
    found = problems(make_bank(tmp_path, question("q1") + question("q1") + question("q2")))
    assert found[0].startswith("questions.yaml:14: duplicate question id 'q1' (first at ")
    assert found[0].endswith("questions.yaml:2)")
    assert "questions.yaml:26: duplicate question number 1 (also 'q1')" in found


def test_unknown_topic_and_dangling_links(tmp_path: Path) -> None:
    glossary = GLOSSARY + "    questions: [q1, q404]\n"
    found = problems(make_bank(tmp_path, question(topic="lorra", terms="[lora, qlora]"), glossary=glossary))
    assert "questions.yaml:2: question 'q1': unknown topic 'lorra' (did you mean 'lora'?)" in found
    assert "questions.yaml:2: question 'q1': dangling glossary link 'qlora' (no such term)" in found
    assert "glossary.yaml:6: term 'lora': dangling question link 'q404' (no such question)" in found


def test_empty_answer_and_key_point_without_match_words(tmp_path: Path) -> None:
    points = '\n      - {text: "a", match: ["a"]}\n      - {text: "b", match: ["b"]}\n      - {text: "c", match: []}'
    found = problems(make_bank(tmp_path, question(answer='""', key_points=points)))
    assert "questions.yaml:9: question 'q1': empty 'answer'" in found
    assert any(p.startswith("questions.yaml:1") and "key point 3: no match words" in p for p in found)


def test_too_few_key_points_and_unknown_field(tmp_path: Path) -> None:
    points = '\n      - {text: "a", match: ["a"]}'
    found = problems(make_bank(tmp_path, question(key_points=points, anwser='"x"')))
    assert "questions.yaml:12: question 'q1': unknown field 'anwser' (did you mean 'answer'?)" in found
    assert "questions.yaml:10: question 'q1': has 1 key points, needs 3 to 6" in found


def test_text_longer_than_telegram_allows(tmp_path: Path) -> None:
    found = problems(make_bank(tmp_path, question(answer='"' + "слово " * 700 + '"')))
    assert len(found) == 2  # over the card's 900 characters, and over one message
    assert any(p.startswith("questions.yaml:9: question 'q1': question and answer are ") for p in found)
    assert any("Telegram allows 4096" in p for p in found)
    details = '"Карточка."\n    details: "' + "слово " * 700 + '"'
    found = problems(make_bank(tmp_path / "details", question(answer=details)))
    assert len(found) == 1
    assert found[0].startswith("questions.yaml:10: question 'q1': details are ")
    assert "Telegram allows 4096" in found[0]


def test_bad_yaml_reports_its_own_line_and_column(tmp_path: Path) -> None:
    bank = make_bank(tmp_path, question())
    (bank / "broken.yaml").write_text('questions:\n  - id: x\n    text: "unclosed\n', encoding="utf-8")
    found = problems(bank)
    assert len(found) == 1 and found[0].startswith("broken.yaml:4: bad YAML at column 1:")


def test_every_problem_reported_at_once_and_cli_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank = make_bank(tmp_path, question("Bad Id") + question("q2", difficulty="5") + question("q3", topic="x"))
    assert main(["validate", str(bank)]) == 1
    err = capsys.readouterr().err
    assert "id 'Bad Id' must be lowercase" in err
    assert "'difficulty' must be a whole number 1..3" in err
    assert "unknown topic 'x'" in err
    assert "3 problem(s) found" in err


def test_alias_shared_by_two_terms(tmp_path: Path) -> None:
    glossary = GLOSSARY + textwrap.indent(
        textwrap.dedent("""\
            - id: qlora
              term: {en: "QLoRA"}
              aliases: ["Лора"]
              definition: "LoRA поверх 4-битной базы."
        """),
        "  ",
    )
    found = problems(make_bank(tmp_path, question(), glossary=glossary))
    assert found == ["glossary.yaml:8: term 'qlora': name or alias 'Лора' is also used by term 'lora'"]


def test_validate_prints_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(make_bank(tmp_path, question() + question("t1", kind="task")))]) == 0
    out = capsys.readouterr().out
    assert "questions: 1, tasks: 1, glossary terms: 1" in out


def test_unchanged_bank_is_rebuilt_from_the_cache(tmp_path: Path) -> None:
    bank_dir = make_bank(tmp_path / "bank", question("q1") + question("q2", number="2"))
    cache = tmp_path / "cache"
    first = load_bank(bank_dir, cache_dir=cache)
    assert len(list(cache.glob("bank-*.pickle"))) == 1
    # Same size and modification time, but broken content: only the cache can still load it.
    target = bank_dir / "questions.yaml"
    stat = target.stat()
    target.write_bytes(b"#" * stat.st_size)
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = load_bank(bank_dir, cache_dir=cache)
    assert list(second.questions) == list(first.questions) == ["q1", "q2"]
    assert second.resolve("2") is not None and second.term("lora").questions == ("q1", "q2")  # type: ignore[union-attr]


def test_a_changed_file_or_broken_cache_means_a_full_load(tmp_path: Path) -> None:
    bank_dir = make_bank(tmp_path / "bank", question("q1"))
    cache = tmp_path / "cache"
    load_bank(bank_dir, cache_dir=cache)
    (bank_dir / "questions.yaml").write_text("questions:\n" + question("q1", topic="nope"), encoding="utf-8")
    with pytest.raises(BankError, match="unknown topic 'nope'"):
        load_bank(bank_dir, cache_dir=cache)
    (bank_dir / "questions.yaml").write_text("questions:\n" + question("q9"), encoding="utf-8")
    for stale in cache.glob("bank-*.pickle"):
        stale.write_bytes(b"not a pickle")
    assert list(load_bank(bank_dir, cache_dir=cache).questions) == ["q9"]


RUBRIC_KP = (
    "\n"
    '      - {text: "ранг", match: ["ранг"]}\n'
    '      - {text: "замороз", weight: bonus, match: ["замороз"]}\n'
    '      - {text: "слияние", weight: extra, match: ["слияние"]}'
)
MISCONCEPTION = '{claim: "LoRA учит все веса", correction: "Веса заморожены.", match: ["учит все веса"]}'


@pytest.mark.parametrize(
    ("overrides", "extra_file", "expected"),
    [
        (
            {"key_points": RUBRIC_KP},
            "",
            "questions.yaml:13: question 'q1' key point 3: weight must be 'core' or 'bonus'",
        ),
        (
            {"misconceptions": f"[{MISCONCEPTION}]"},
            "",
            "questions.yaml:10: question 'q1': has 1 misconceptions, needs 2 to 8",
        ),
        (
            {"misconceptions": f'[{MISCONCEPTION}, {{claim: "x", match: ["y"]}}]'},
            "",
            "questions.yaml:10: question 'q1' misconception 2: missing 'correction'",
        ),
        ({}, "antonyms:\n  - [больше, меньше]\n  - [быстрее]\n", "lexicon.yaml:3: an 'antonyms' entry must be a pair"),
        ({}, "synonyms:\n  - [задержка, latency]\n  - задержка\n", "lexicon.yaml:3: every entry under 'synonyms'"),
    ],
)
def test_rubric_fields_are_checked_with_file_and_line(
    tmp_path: Path, overrides: dict[str, str], extra_file: str, expected: str
) -> None:
    path = make_bank(tmp_path, question(**overrides))
    if extra_file:
        (path / "lexicon.yaml").write_text(extra_file, encoding="utf-8")
    found = problems(path)
    assert any(p.startswith(expected) for p in found), found


def test_rubric_fields_load(tmp_path: Path) -> None:
    kp = RUBRIC_KP.replace("weight: extra, ", "")
    two = f'[{MISCONCEPTION}, {{claim: "r = число слоёв", correction: "r — ранг.", match: ["r число слоёв"]}}]'
    path = make_bank(tmp_path, question(key_points=kp, misconceptions=two))
    (path / "lexicon.yaml").write_text("synonyms:\n  - [задержка, latency]\nantonyms:\n  - [больше, меньше]\n")
    bank = load_bank(path)
    q = bank.questions["q1"]
    assert [kp.weight for kp in q.key_points] == ["core", "bonus", "core"]
    assert [m.claim for m in q.misconceptions] == ["LoRA учит все веса", "r = число слоёв"]
    assert bank.lexicon.synonyms == (("задержка", "latency"),) and bank.lexicon.antonyms == (("больше", "меньше"),)


def test_details_follow_ups_context_and_original_source_load(tmp_path: Path) -> None:
    extra = (
        '"Карточка."\n    details: "Подробности."\n    context: "Речь о LoRA."\n'
        "    source: {kind: original}\n    follow_ups:\n"
        '      - {question: "Какой ранг берут?", answer: "8–64."}\n'
        '      - {question: "А alpha?", answer: "Обычно 2r."}'
    )
    bank = load_bank(make_bank(tmp_path, question(answer=extra)))
    q = bank.questions["q1"]
    assert (q.answer, q.details, q.context, q.original) == ("Карточка.", "Подробности.", "Речь о LoRA.", True)
    assert [f.question for f in q.follow_ups] == ["Какой ранг берут?", "А alpha?"]
    plain = load_bank(make_bank(tmp_path / "plain", question()))
    assert (plain.questions["q1"].details, plain.questions["q1"].follow_ups, plain.questions["q1"].original) == (
        None,
        (),
        False,
    )


def test_follow_ups_and_source_kind_are_checked_with_file_and_line(tmp_path: Path) -> None:
    extra = (
        '"Карточка."\n    source: {kind: borrowed}\n    follow_ups:\n'
        f'      - {{question: "Один?", answer: "{"а" * 401}"}}\n'
    )
    found = problems(make_bank(tmp_path, question(answer=extra)))
    assert "questions.yaml:10: question 'q1': source kind must be 'seed' or 'original'" in found
    assert "questions.yaml:11: question 'q1': has 1 follow-ups, needs 2 to 3" in found


def test_a_follow_up_answer_over_400_characters_is_named(tmp_path: Path) -> None:
    extra = (
        '"Карточка."\n    follow_ups:\n'
        '      - {question: "Один?", answer: "Да."}\n'
        f'      - {{question: "Два?", answer: "{"а" * 401}"}}\n'
    )
    found = problems(make_bank(tmp_path, question(answer=extra)))
    assert found == ["questions.yaml:12: question 'q1' follow-up 2: the answer is 401 characters; at most 400"]


def test_an_answer_card_over_900_characters_is_named(tmp_path: Path) -> None:
    found = problems(make_bank(tmp_path, question(answer='"' + "а" * 901 + '"')))
    assert found == [
        "questions.yaml:9: question 'q1': the answer is 901 characters; the card holds at most 900 "
        "(move the rest to 'details:')"
    ]


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_a_large_file_parsed_an_entry_at_a_time_reads_and_reports_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files over CHUNKED_CHARS are parsed one entry at a time (a 4 MB import's validation peaked past
    250 MB): every shipped file parses to the same data with the same lines, a broken bank gets the
    same report, and another layout takes the whole parse."""
    import shutil

    from bot.bank import loader, yaml_lines

    def lines(data: object) -> object:  # the data with every line number the loader keeps
        if isinstance(data, dict):
            return [(k, getattr(data, "key_lines", {}).get(k), lines(v)) for k, v in data.items()]
        if isinstance(data, list):
            return [(getattr(data, "item_lines", [None] * len(data))[i], lines(v)) for i, v in enumerate(data)]
        return data

    for path in sorted(default_bank_path().rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        whole = yaml_lines.parse_yaml(text, 0, [])
        chunked = yaml_lines.parse_in_chunks(text, [])
        assert chunked is not None, path
        assert lines(chunked) == lines(whole), path
    assert yaml_lines.parse_in_chunks("questions: []\n", []) is None  # a flow list: the whole parse
    bank = tmp_path / "bank"
    shutil.copytree(default_bank_path(), bank)
    lora = bank / "questions" / "lora.yaml"
    text = lora.read_text(encoding="utf-8")
    lora.write_text(
        text.replace("difficulty: 1", "difficulty: 7", 1).replace("    kind: question", "    kind: riddle", 2)
    )
    with pytest.raises(BankError) as at_once:
        load_bank(bank)
    monkeypatch.setattr(loader, "CHUNKED_CHARS", 0)
    with pytest.raises(BankError) as in_chunks:
        load_bank(bank)
    assert in_chunks.value.report() == at_once.value.report() and "lora.yaml:" in at_once.value.report()
