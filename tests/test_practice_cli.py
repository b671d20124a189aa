"""`interview-bot practice`: the practice loop in a terminal, driven by a script on stdin and
through a pseudo-terminal, with the answers landing in the database."""

from __future__ import annotations

import fcntl
import io
import os
import random
import re
import select
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from bot.bank import load_bank
from bot.bank.markdown import to_plain
from bot.cli import main
from bot.terminal import PracticeOptions, run_practice
from tests.conftest import ROOT

BANK = ROOT / "tests" / "fixtures" / "interop" / "practice_bank.yaml"
# Covers the first two key points of both questions and misses the third of each.
ANSWER = (
    "Модель запоминает шум обучающей выборки, а ошибка на валидации растёт.\n"
    "Для warmup первые шаги делают постепенно, пока моменты Adam не оценены."
)


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_stdin_script_feedback_reference_and_storage(tmp_path: Path) -> None:
    bank = load_bank(BANK)
    db = tmp_path / "p.db"
    script = io.StringIO(f"{ANSWER}\n\n\n:answer\n\n")  # answer, Enter: next; :answer, Enter: done
    out = io.StringIO()
    stats = run_practice(
        bank, f"sqlite:///{db}", PracticeOptions(n=2, lang="ru"), stdin=script, stdout=out, rng=random.Random(3)
    )
    text = out.getvalue()

    # every question shows the handle that asks it again: unnumbered ml-01 is «ml-1», not its padded id
    asked = re.findall(r"Вопрос (\d)/2 · Основы ML · (ml-\d)\n(.+)\n", text)
    assert [n for n, _, _ in asked] == ["1", "2"] and "ml-0" not in text
    by_text = {q.text: q for q in bank.questions.values()}
    first, second = (by_text[line] for _, _, line in asked)
    assert [handle for _, handle, _ in asked] == [first.label, second.label]
    assert bank.resolve(first.label) == first
    assert {first.id, second.id} == {"ml-01", "ml-02"}
    feedback = text.split(first.text, 1)[1].split("Вопрос 2/2", 1)[0]
    assert "✅ Оценка: 79/100 — хороший ответ" in feedback
    assert "Ключевые пункты: покрыто 2 из 3" in feedback
    assert f"✓ {first.key_points[0].text}" in feedback and f"✓ {first.key_points[1].text}" in feedback
    assert f"• {first.key_points[2].text.rstrip('.')}." in feedback  # the missed point as a whole sentence
    # compact: each key point once (in the feedback), the reference answer and details on request
    graded = feedback.split("Оценка:", 1)[1]  # what the terminal says (the typed answer is echoed above)
    assert all(graded.count(kp.text.rstrip(".")) == 1 for kp in first.key_points)
    assert to_plain(first.answer) not in text and "Эталонный ответ — :answer" not in feedback
    assert "Enter — следующий вопрос · :answer — эталонный ответ · :more — подробности" in feedback
    assert len(graded.strip().splitlines()) <= 12
    assert "**" not in text  # the Markdown is rendered for the terminal
    # :answer on the second question shows its answer without grading it
    after = text.split(second.text, 1)[1]
    assert "Оценка:" not in after and to_plain(second.answer) in after
    assert text.rstrip().endswith(
        f"Итог: вопросов 2, ответов 1, пропущено 0, средняя оценка 79/100. Ответы сохранены: {db}."
    )
    assert (stats.asked, stats.answered) == (2, 1)

    assert rows(db, "SELECT user_id, chat_id, question_id, text, round(coverage, 2), covered FROM answers") == [
        (0, 0, first.id, ANSWER, 0.79, "0,1")
    ]
    assert rows(db, "SELECT chat_id, user_id, question_id, source FROM asks ORDER BY id") == [
        (0, 0, first.id, "terminal"),
        (0, 0, second.id, "terminal"),
    ]
    assert rows(db, "SELECT id, type FROM chats") == [(0, "terminal")]
    assert rows(db, "SELECT question_id FROM reveals ORDER BY id") == [(first.id,), (second.id,)]
    # the same storage path as the bot: the answer reviews the FSRS card
    assert rows(db, "SELECT user_id, question_id, reps FROM cards") == [(0, first.id, 1)]


def test_no_repeats_across_sessions_until_the_topic_is_exhausted(tmp_path: Path) -> None:
    bank = load_bank(BANK)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seen = []
    for _ in range(2):
        out = io.StringIO()
        options = PracticeOptions(topic=bank.topic("ml"), n=1, lang="ru")
        run_practice(bank, url, options, stdin=io.StringIO(":skip\n"), stdout=out)
        by_text = {q.text: q.id for q in bank.questions.values()}
        seen += [by_text[line] for line in re.findall(r"Вопрос 1/1 · Основы ML · ml-\d\n(.+)\n", out.getvalue())]
        assert "Пропущено." in out.getvalue()
    assert sorted(seen) == ["ml-01", "ml-02"]


def test_eof_right_away_quits_with_a_summary(tmp_path: Path) -> None:
    out = io.StringIO()
    stats = run_practice(
        load_bank(BANK), f"sqlite:///{tmp_path / 'p.db'}", PracticeOptions(n=5), stdin=io.StringIO(""), stdout=out
    )
    assert "Practice: 2 questions, all topics." in out.getvalue()  # the CLI speaks English by default
    assert out.getvalue().rstrip().splitlines()[-1].startswith("Done: 1 asked, 0 answered, 0 skipped.")
    assert stats.answered == 0


def test_unknown_topic_lists_the_topics(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BANK_PATH", str(BANK))
    assert main(["practice", "--topic", "квант"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("interview-bot: no topic 'квант'; the topics are:") and "ml" in err and "Основы ML" in err


# Through a pseudo-terminal, as a person runs it -------------------------------------------------


class Terminal:
    """`python -m bot practice` on a pty: what it prints, and typing into it."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        import pty

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))  # 40 rows, 160 columns
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", *args], stdin=slave, stdout=slave, stderr=slave,
            env=env, cwd=cwd, close_fds=True,
        )  # fmt: skip
        os.close(slave)
        self.buffer = b""
        self.pos = 0  # output before this was matched already

    def read_until(self, pattern: str, timeout: float = 30.0) -> str:
        """Wait for ``pattern`` to appear in the output after the previous match."""
        deadline = time.monotonic() + timeout
        needle = pattern.encode()
        while needle not in self.buffer[self.pos :]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} in:\n{self.text}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"exited before {pattern!r}:\n{self.text}")
                self.buffer += chunk
        self.pos = self.buffer.index(needle, self.pos) + len(needle)
        return self.text

    @property
    def text(self) -> str:
        return self.buffer.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(20)
        finally:
            os.close(self.master)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BANK_PATH", "BOT_TOKEN")}
    env.update(BANK_PATH=str(BANK), PYTHONUNBUFFERED="1", TERM="dumb", PYTHONPATH=str(ROOT), **extra)
    return env


def test_in_a_pseudo_terminal_with_ctrl_d(tmp_path: Path) -> None:
    db = tmp_path / "pty.db"
    term = Terminal(["practice", "--n", "2", "--lang", "ru"], _env(tmp_path, DATABASE_URL=f"sqlite:///{db}"), tmp_path)
    term.read_until("> ")
    term.type(ANSWER.replace("\n", "\r") + "\r\r")
    screen = term.read_until(":more — подробности и что спросят дальше · :quit")
    assert "✅ Оценка: 79/100 — хороший ответ" in screen and "Что ещё стоит раскрыть:" in screen
    term.type(":answer\r")
    screen = term.read_until("Эталонный ответ:")
    term.type(":more\r")
    screen = term.read_until("Подробностей и уточняющих вопросов у этого вопроса нет.")
    term.type("\r")
    term.read_until("Вопрос 2/2")
    term.read_until("> ")
    term.type("\x04")  # Ctrl-D at the start of a line
    screen = term.read_until("Ответы сохранены")
    assert term.close() == 0
    assert "Итог: вопросов 2, ответов 1, пропущено 0, средняя оценка 79/100." in screen
    assert "Traceback" not in screen
    assert rows(db, "SELECT user_id, chat_id, text FROM answers") == [(0, 0, ANSWER)]


@pytest.mark.parametrize(("language", "start"), [(None, "Тренировка: 1 вопрос"), ("en", "Practice: 1 question")])
def test_the_cli_speaks_default_language_as_the_bot_does(tmp_path: Path, language: str | None, start: str) -> None:
    """Issue 32: `practice` spoke English while the bot (DEFAULT_LANGUAGE) speaks Russian."""
    extra = {"DEFAULT_LANGUAGE": language} if language else {}
    env = _env(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'l.db'}", HOME=str(tmp_path), **extra)
    env.pop("DEFAULT_LANGUAGE", None) if language is None else None
    result = subprocess.run(
        [sys.executable, "-m", "bot", "practice", "--n", "1"], input="", capture_output=True, text=True, env=env,
        cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(start), result.stdout


def test_without_database_url_uses_the_default_sqlite_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = _env(tmp_path, HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    result = subprocess.run(
        [sys.executable, "-m", "bot", "practice", "--n", "1"],
        input=f"{ANSWER}\n\n", capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    db = home / "data" / "interview-bot" / "interview-bot.db"
    assert f"Ответы сохранены: {db}." in result.stdout  # DEFAULT_LANGUAGE: Russian, as the bot
    assert rows(db, "SELECT user_id, chat_id, text FROM answers") == [(0, 0, ANSWER)]
