"""The practice loop in a terminal, without a bot token (``interview-bot practice``).

The same core as the bot (no-repeat picking, key-point grading, the reference answer) and the same
database: the terminal is user 0 in chat 0 (type "terminal"), so what the bot's picking and
statistics know about asks and answers holds here too.
"""

from __future__ import annotations

import asyncio
import random
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, TextIO

from bot.bank import Bank, Question, Topic
from bot.bank.markdown import inline_plain, to_plain
from bot.core.grading import Grade
from bot.core.picking import candidates_for
from bot.db import chat_store
from bot.db.engine import Database, describe_url
from bot.db.models import Ask, AskSource
from bot.i18n import counted
from bot.services import answers, asking, revealing
from bot.services.deps import Deps
from bot.services.feedback import feedback_lines
from bot.services.grading import KeywordGrader, Outcome

TERMINAL_USER: Final = 0
TERMINAL_CHAT: Final = 0
CHAT_TYPE: Final = "terminal"
RULE: Final = "─" * 60
# What the terminal says, in the two interface languages (DEFAULT_LANGUAGE unless --lang says).
TEXTS: Final[dict[str, dict[str, str]]] = {
    "en": {
        "help": "Type your answer over several lines; an empty line sends it.\n"
        "Commands: :skip — next question, :answer — show the answer, :quit — leave (or Ctrl-D).",
        "after": "Enter — next question · :answer — the reference answer · :more — details and follow-ups · :quit",
        "summary": "Done: {asked} asked, {answered} answered, {skipped} skipped{mean}. Answers are stored in {where}.",
        "mean": ", mean score {score}/100",
        "none": "No questions here.",
        "only_tasks": "No questions here, only practice tasks: add --tasks.",
        "start": "Practice: {count}, {where}.",
        "all_topics": "all topics",
        "topic": "topic “{title}”",
        "question": "Question {i}/{total} · {title}{label}",
        "task": "task {n}",
        "skipped": "Skipped.",
        "empty": "(empty answer: type an answer, :skip or :quit)",
        "reference": "Reference answer:",
        "should_have": "What the answer should have:",
        "details": "More details:",
        "follow_ups": "What they ask next:",
        "no_more": "This question has no details or follow-ups.",
    },
    "ru": {
        "help": "Пишите ответ в несколько строк; пустая строка — отправить.\n"
        "Команды: :skip — следующий вопрос, :answer — показать ответ, :quit — выйти (или Ctrl-D).",
        "after": "Enter — следующий вопрос · :answer — эталонный ответ · :more — подробности и что спросят дальше · "
        ":quit",
        "summary": "Итог: вопросов {asked}, ответов {answered}, пропущено {skipped}{mean}. Ответы сохранены: {where}.",
        "mean": ", средняя оценка {score}/100",
        "none": "Здесь нет вопросов.",
        "only_tasks": "Здесь нет вопросов — только практические задачи: добавьте --tasks.",
        "start": "Тренировка: {count}, {where}.",
        "all_topics": "все темы",
        "topic": "тема «{title}»",
        "question": "Вопрос {i}/{total} · {title}{label}",
        "task": "задача {n}",
        "skipped": "Пропущено.",
        "empty": "(пустой ответ: напишите ответ, :skip или :quit)",
        "reference": "Эталонный ответ:",
        "should_have": "Что должно быть в ответе:",
        "details": "Подробнее:",
        "follow_ups": "Что спросят дальше:",
        "no_more": "Подробностей и уточняющих вопросов у этого вопроса нет.",
    },
}
HELP: Final = TEXTS["en"]["help"]


def _now() -> datetime:
    return datetime.now(UTC)


class _Quit(Exception):
    pass


@dataclass(slots=True)
class Stats:
    asked: int = 0
    answered: int = 0
    skipped: int = 0
    revealed: int = 0
    coverage: float = 0.0

    def line(self, where: str, lang: str = "en") -> str:
        texts = TEXTS[lang]
        mean = texts["mean"].format(score=round(100 * self.coverage / self.answered)) if self.answered else ""
        return texts["summary"].format(
            asked=self.asked, answered=self.answered, skipped=self.skipped, mean=mean, where=where
        )


@dataclass(frozen=True, slots=True)
class PracticeOptions:
    """What one practice run asks: a topic (None: all), how many questions, whether practice tasks
    come too, and the language of its texts."""

    topic: Topic | None = None
    n: int = 5
    include_tasks: bool = False
    lang: str = "en"


class Console:
    """The terminal a practice run talks to: answers read from ``stdin``, texts printed to ``stdout``."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin = stdin
        self.out = stdout
        self._interactive = stdin is sys.stdin and stdin.isatty()
        if self._interactive:
            try:
                import readline  # noqa: F401  (line editing and history for input())
            except ImportError:  # pragma: no cover - Windows
                pass

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def read_line(self, prompt: str) -> str:
        if self._interactive:
            return input(prompt)
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        line = line.rstrip("\r\n")
        if not self.stdin.isatty():  # a script: show what was "typed", as a terminal would
            self.out.write(line + "\n")
        return line


class PracticeSession:
    """One practice run on a :class:`Console`."""

    def __init__(
        self,
        bank: Bank,
        db: Database,
        runner: asyncio.Runner,
        options: PracticeOptions,
        console: Console,
        *,
        rng: random.Random | None = None,
        grader: KeywordGrader | None = None,
    ) -> None:
        self.options = options
        self.lang = options.lang if options.lang in TEXTS else "en"
        self.texts = TEXTS[self.lang]
        self.bank = bank
        self.db = db
        self.grader = grader or KeywordGrader(bank.lexicon)
        self.run_async = runner.run
        self.say = console.say
        self.read_line = console.read_line
        self.rng = rng or random.Random()
        self.deps = Deps(db, self.grader, _now, self.rng)
        self.stats = Stats()

    # -- storage -----------------------------------------------------------------------------
    async def _setup(self) -> None:
        await self.db.migrate()
        async with self.db.write() as session:
            await chat_store.upsert_user(session, chat_store.UserInfo(TERMINAL_USER, "terminal"))
            await chat_store.upsert_chat(session, chat_store.ChatInfo(TERMINAL_CHAT, CHAT_TYPE, "Terminal"))
            # the terminal is not a person in any group's leaderboard
            await chat_store.set_user_fields(session, TERMINAL_USER, board_opt_out=True)

    async def _next(self, candidates: list[str], asked: set[str]) -> tuple[str, Ask] | None:
        return await asking.pick_and_record(
            self.deps, self.bank, chat_id=TERMINAL_CHAT, user_id=TERMINAL_USER, candidates=candidates,
            exclude=asked, source=AskSource.TERMINAL,
        )  # fmt: skip

    async def _answer(self, q: Question, ask: Ask, text: str) -> Outcome:
        """The bot's own answering path (grade, store, FSRS review), then the reference answer is
        shown, so the reveal is noted too."""
        attempt = answers.Attempt(ask, q, TERMINAL_USER, TERMINAL_CHAT, None, text, self.lang)
        done = await answers.submit(self.deps, self.bank, attempt)
        await revealing.note_reveal(self.db, q, chat_id=TERMINAL_CHAT, user_id=TERMINAL_USER)
        assert done.outcome is not None  # the terminal's asks are never an interview's
        return done.outcome

    async def _reveal(self, q: Question) -> None:
        await revealing.note_reveal(self.db, q, chat_id=TERMINAL_CHAT, user_id=TERMINAL_USER)

    # -- the loop ----------------------------------------------------------------------------
    def run(self) -> Stats:
        topic, n, include_tasks = self.options.topic, self.options.n, self.options.include_tasks
        self.run_async(self._setup())
        candidates = list(candidates_for(self.bank, topic.id if topic else None, include_tasks=include_tasks))
        total = min(n, len(candidates))
        if not candidates:
            tasks = not include_tasks and candidates_for(self.bank, topic.id if topic else None, include_tasks=True)
            self.say(self.texts["only_tasks" if tasks else "none"])
            return self.stats
        where = self.texts["topic"].format(title=topic.title(self.lang)) if topic else self.texts["all_topics"]
        self.say(self.texts["start"].format(count=counted(total, "questions", self.lang), where=where))
        self.say(self.texts["help"])
        asked: set[str] = set()
        try:
            for i in range(1, total + 1):
                picked = self.run_async(self._next(candidates, asked))
                if picked is None:
                    break
                qid, ask = picked
                asked.add(qid)
                self.stats.asked += 1
                self._question(self.bank.questions[qid], ask, i, total)
        except _Quit:
            pass
        self.say()
        return self.stats

    def _question(self, q: Question, ask: Ask, i: int, total: int) -> None:
        topic = self.bank.topic(q.topic)
        title = topic.title(self.lang) if topic else q.topic
        # the handle a user can type (#463, задача 13, lora-4)
        if q.number is None:
            label = q.label
        else:
            label = self.texts["task"].format(n=q.number) if q.kind == "task" else f"#{q.number}"
        self.say()
        self.say(RULE)
        self.say(self.texts["question"].format(i=i, total=total, title=title, label=f" · {label}" if label else ""))
        if q.context:
            self.say(q.context)
        self.say(q.text)
        self.say()
        text, ended = self._read_answer()
        if text == ":skip":
            self.stats.skipped += 1
            self.say(self.texts["skipped"])
            return
        if text == ":answer":
            self.stats.revealed += 1
            self.run_async(self._reveal(q))
            self._show_reference(q, with_points=True)
            self._after(q, shown=True)
            return
        outcome = self.run_async(self._answer(q, ask, text))
        grade = outcome.grade
        self.stats.answered += 1
        self.stats.coverage += grade.score
        self._feedback(q, grade, outcome.fallback)
        if ended:
            raise _Quit
        self._after(q)

    def _after(self, q: Question, *, shown: bool = False) -> None:
        """After the feedback (every key point is in it, covered or missed): the reference answer and
        the details only on request, so a question takes a screen, not fifty lines."""
        while True:
            self.say()
            try:
                command = self.read_line(self.texts["after"] + "\n> ").strip().casefold()
            except (EOFError, KeyboardInterrupt):
                self.say()
                raise _Quit from None
            if command in ("", ":next", ":n", ":skip", ":s"):
                return
            if command in (":quit", ":q", ":exit"):
                raise _Quit
            if command in (":answer", ":a", ":show") and not shown:
                self._show_reference(q, with_points=False)
                shown = True
            elif command in (":more", ":m", ":details"):
                self._show_more(q)

    def _read_answer(self) -> tuple[str, bool]:
        """Lines until an empty line, and whether input ended (EOF: what was typed is still
        graded, then the session ends). A command on the first line acts at once."""
        lines: list[str] = []
        while True:
            try:
                line = self.read_line("> " if not lines else "  ")
            except (EOFError, KeyboardInterrupt):
                if lines:
                    self.say()
                    return "\n".join(lines), True
                raise _Quit from None
            command = line.strip().casefold()
            if not lines and command.startswith(":"):
                if command in (":quit", ":q", ":exit"):
                    raise _Quit
                if command in (":skip", ":s", ":next"):
                    return ":skip", False
                if command in (":answer", ":a", ":show"):
                    return ":answer", False
                self.say(self.texts["help"])
                continue
            if not line.strip():
                if lines:
                    return "\n".join(lines), False
                self.say(self.texts["empty"])
                continue
            lines.append(line)

    def _feedback(self, q: Question, grade: Grade, fallback: str = "") -> None:
        self.say()
        for line in feedback_lines(q, grade, self.lang, fallback=fallback):
            text = inline_plain(line.text)  # a terminal shows no Markdown: `code` loses its backticks
            self.say(text if line.kind in ("score", "heading", "note", "text") else f"  {text}")

    def _show_reference(self, q: Question, *, with_points: bool) -> None:
        """The reference answer; its key points too when no feedback listed them."""
        self.say()
        self.say(self.texts["reference"])
        self.say(to_plain(q.answer))
        if with_points:
            self.say()
            self.say(self.texts["should_have"])
            for kp in q.key_points:
                self.say(f"  • {inline_plain(kp.text)}")

    def _show_more(self, q: Question) -> None:
        if not q.details and not q.follow_ups:
            self.say(self.texts["no_more"])
        if q.details:
            self.say()
            self.say(self.texts["details"])
            self.say(to_plain(q.details))
        if q.follow_ups:
            self.say()
            self.say(self.texts["follow_ups"])
            for f in q.follow_ups:
                self.say(f"  • {inline_plain(f.question)}")
                self.say(f"    {inline_plain(f.answer)}")


def run_practice(
    bank: Bank,
    database_url: str,
    options: PracticeOptions,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    rng: random.Random | None = None,
    grader: KeywordGrader | None = None,
) -> Stats:
    out = stdout or sys.stdout
    db = Database(database_url)
    with asyncio.Runner() as runner:
        try:
            console = Console(stdin or sys.stdin, out)
            session = PracticeSession(bank, db, runner, options, console, rng=rng, grader=grader)
            stats = session.run()
        finally:
            runner.run(db.close())
    print(stats.line(describe_url(db.url), session.lang), file=out, flush=True)
    return stats
