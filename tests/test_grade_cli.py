"""``interview-bot grade`` and ``grade-eval`` as a user runs them: stable JSON lines, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "PYTHONPATH": str(ROOT)}  # this checkout's bot
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=env, cwd=cwd, input=stdin,
        timeout=120,
    )  # fmt: skip


def test_grade_jsonl_prints_one_result_per_answer(tmp_path: Path) -> None:
    answers = [
        {"question": "q463", "answer": "Активации не храним, а пересчитываем их в backward; платим лишним forward, "
         "примерно +30% вычислений, а память падает до корня из числа слоёв."},
        {"question": "q463", "answer": "Не знаю."},
    ]  # fmt: skip
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a, ensure_ascii=False) for a in answers) + "\n\n", encoding="utf-8")
    run = _run("grade", "--jsonl", str(path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    results = [json.loads(line) for line in run.stdout.splitlines()]
    keys = {"question", "score", "verdict", "covered", "missed", "misconceptions", "evidence", "reversed", "asks"}
    assert [set(r) for r in results] == [keys] * 2
    good, unsure = results
    assert good["question"] == "q463" and 0 <= good["score"] <= 1
    assert good["score"] > unsure["score"] == 0 and unsure["verdict"] == "weak"
    assert sorted(good["covered"] + good["missed"]) == list(range(len(good["covered"]) + len(good["missed"])))


def test_every_charge_quotes_the_sentence_that_made_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    wrong = "Checkpointing сохраняет веса модели на диск, чтобы освободить видеопамять."
    refuting = "Часто думают, что checkpointing сохраняет веса модели на диск, но это не так: активации пересчитывают."
    answers = [
        {"question": "q463", "answer": f"Это просто. {wrong} Вот и всё."},
        {"question": "q463", "answer": refuting},
    ]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(a, ensure_ascii=False) for a in answers), encoding="utf-8")
    assert main(["grade", "--jsonl", str(path)]) == 0
    charged, refuted = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert charged["misconceptions"] and charged["verdict"] == "weak"
    assert charged["evidence"] == [{"misconception": i, "sentence": wrong} for i in charged["misconceptions"]]
    assert refuted["misconceptions"] == [] and refuted["evidence"] == []


def test_grade_takes_the_number_or_handle_the_bot_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 32: `grade --jsonl` took only internal ids (serving-08), not the 958 the bot shows."""
    from bot.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    refs = ["958", 958, "#958", "serving-08", "q463", "463", "t13", "T13"]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps({"question": r, "answer": "не знаю"}) for r in refs), encoding="utf-8")
    assert main(["grade", "--jsonl", str(path)]) == 0
    ids = [json.loads(line)["question"] for line in capsys.readouterr().out.splitlines()]
    assert ids == ["serving-08"] * 4 + ["q463", "q463", "t13", "t13"]


def test_disputes_lists_and_exports_nothing_on_a_new_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/d.db")
    assert main(["disputes"]) == 0 and capsys.readouterr().out.strip() == "no disputes"
    assert main(["disputes", "--jsonl", "-"]) == 0 and capsys.readouterr().out == ""


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"question": "q99999", "answer": "x"}', "unknown question 'q99999' (a number as the bot shows it"),
        ('{"question": "q463"}', 'expected {"question": "<id>", "answer": "<text>"}'),
        ("not json", 'expected {"question": "<id>", "answer": "<text>"}'),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, line: str, message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.cli import main

    monkeypatch.setenv("HOME", str(tmp_path))
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    assert main(["grade", "--jsonl", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (one,) = err.strip().splitlines()
    assert message in one and f"{path}:1" in one


def test_bad_input_from_the_terminal_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    """The same through the real entry point: nothing but the one line reaches the terminal."""
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "q99999", "answer": "x"}\n', encoding="utf-8")
    run = _run("grade", "--jsonl", str(path), cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    (err,) = run.stderr.strip().splitlines()
    assert "unknown question 'q99999'" in err and f"{path}:1" in err


@pytest.mark.slow  # a whole-bank sweep or a process of its own: the slow step (README, Development)
def test_grade_eval_prints_the_agreement_report(tmp_path: Path) -> None:
    run = _run("grade-eval", str(ROOT / "tests" / "fixtures" / "grader_set.yaml"), "--split", "dev", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for needle in ("Spearman with the expert's score:", "macro-F1", "fluent_wrong", "strong answer above"):
        assert needle in run.stdout
