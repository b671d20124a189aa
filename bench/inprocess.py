"""In-process cost per update, without HTTP: our real Application (bot.tg.app.build_application)
with a request object that records every Bot API call and returns canned Telegram responses
(a telegram.request.BaseRequest subclass, as PTB's own tests do), a temporary SQLite database
migrated with Database.migrate(), and Update objects fed through the update processor and
``Application.process_update``. Baseline: a bare PTB Application with one echo MessageHandler on
the same recording request, in the same run.

Reports wall and CPU µs per update for /q, a text answer, the reveal button, /search and a
/glossary lookup, the SQL statements per update, then a cProfile (or pyinstrument) profile with
the top costs.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import itertools
import json
import pstats
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.common import banner, fmt, median, rmtree, summary, table, tempdir

TOKEN = "123456789:AAFakeTokenForTestsOnly_abcdefghijklmnop"
BOT_USER = {"id": 123456789, "is_bot": True, "first_name": "Interview", "username": "interview_test_bot"}
ANSWER = (
    "Я бы сохранял чекпоинты регулярно: веса модели, состояние оптимизатора и номер шага, чтобы после "
    "сбоя продолжить обучение с последней контрольной точки, а не с нуля. Gradient checkpointing "
    "экономит память активаций: часть активаций пересчитывается на backward pass ценой примерно ещё "
    "одного прямого прохода. Сохранять лучше асинхронно и проверять целостность файла."
)
SEARCHES = [
    "чекпоинтов",
    "kv cache",
    "градиентный спуск",
    "lora ранг",
    "attention",
    "распределённое обучение",
    "квантизация весов",
    "rag retrieval",
    "batch norm",
    "оптимизатор adam",
]
GLOSSARY = [
    "чекпоинт",
    "lora",
    "атеншн",
    "kv-кэш",
    "батчнорм",
    "дропаут",
    "softmax",
    "трансформер",
    "квантизация",
    "эмбеддинг",
]


def make_request_class() -> type:
    from telegram.request import BaseRequest

    class RecordingRequest(BaseRequest):
        """Answers like Telegram without a network; counts the calls per API method."""

        def __init__(self) -> None:
            self.calls: list[str] = []
            self.last: dict[int, dict[str, Any]] = {}  # chat id -> last sendMessage params
            self.ids = itertools.count(10_000)

        async def initialize(self) -> None:
            return None

        async def shutdown(self) -> None:
            return None

        @property
        def read_timeout(self) -> float | None:
            return 5.0

        async def do_request(
            self,
            url: str,
            method: str,
            request_data: Any = None,
            read_timeout: Any = None,
            write_timeout: Any = None,
            connect_timeout: Any = None,
            pool_timeout: Any = None,
        ) -> tuple[int, bytes]:
            api = url.rsplit("/", 1)[-1]
            # what HTTPXRequest does with the parameters: JSON-encode every value
            params = request_data.json_parameters if request_data is not None else {}
            self.calls.append(api)
            result: Any = True
            if api == "getMe":
                result = {
                    **BOT_USER,
                    "can_join_groups": True,
                    "can_read_all_group_messages": False,
                    "supports_inline_queries": False,
                }
            elif api in ("sendMessage", "editMessageText", "sendDocument", "sendPhoto", "sendPoll"):
                chat_id = int(params["chat_id"])
                message: dict[str, Any] = {
                    "message_id": next(self.ids),
                    "date": int(time.time()),
                    "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "group"},
                    "from": BOT_USER,
                    "text": params.get("text", "x"),
                }
                if "reply_markup" in params:
                    markup = json.loads(params["reply_markup"])
                    if "inline_keyboard" in markup:
                        message["reply_markup"] = markup
                if api == "sendMessage":
                    self.last[chat_id] = {**params, "message_id": message["message_id"]}
                result = message
            elif api == "getUpdates":
                result = []
            return 200, json.dumps({"ok": True, "result": result}).encode()

    return RecordingRequest


class SqlCounter:
    """Counts SQL statements and their time (SQLAlchemy cursor events on the sync engine)."""

    def __init__(self, engine: Any) -> None:
        from sqlalchemy import event

        self.count = 0
        self.seconds = 0.0
        self._started: list[float] = []
        engines = [engine] if not hasattr(engine, "sync_engine") else [engine.sync_engine]
        for target in engines:
            event.listen(target, "before_cursor_execute", self._before)
            event.listen(target, "after_cursor_execute", self._after)
        # the prepared statements' plans run on the sqlite3 connection, past those events
        from bot.db import sql

        run = sql._Plan.run

        def counted(plan: Any, *args: Any) -> Any:
            self._before()
            try:
                return run(plan, *args)
            finally:
                self._after()

        sql._Plan.run = counted  # type: ignore[method-assign]

    def _before(self, *args: Any) -> None:
        self._started.append(time.perf_counter())

    def _after(self, *args: Any) -> None:
        self.count += 1
        if self._started:
            self.seconds += time.perf_counter() - self._started.pop()

    def snapshot(self) -> tuple[int, float]:
        return self.count, self.seconds


def _message(uid: int, mid: int, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_id": mid,
        "date": int(time.time()),
        "chat": {"id": uid, "type": "private", "first_name": "Bench"},
        "from": {"id": uid, "is_bot": False, "first_name": "Bench", "language_code": "ru"},
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return message


class Harness:
    def __init__(self, app: Any, request: Any, sql: SqlCounter | None) -> None:
        self.app, self.request, self.sql = app, request, sql
        self.update_ids = itertools.count(1)
        self.message_ids = itertools.count(1)
        self.samples: dict[str, list[tuple[float, float, int, float, int]]] = defaultdict(list)

    async def feed(self, kind: str | None, data: dict[str, Any]) -> None:
        from telegram import Update

        update = Update.de_json({"update_id": next(self.update_ids), **data}, self.app.bot)
        calls0 = len(self.request.calls)
        sql0 = self.sql.snapshot() if self.sql else (0, 0.0)
        c0, t0 = time.process_time(), time.perf_counter()
        await self.app.update_processor.process_update(update, self.app.process_update(update))
        t1, c1 = time.perf_counter(), time.process_time()
        if kind is not None:
            sql1 = self.sql.snapshot() if self.sql else (0, 0.0)
            self.samples[kind].append(
                (t1 - t0, c1 - c0, len(self.request.calls) - calls0, sql1[1] - sql0[1], sql1[0] - sql0[0])
            )

    async def text(self, kind: str | None, uid: int, text: str) -> None:
        await self.feed(kind, {"message": _message(uid, next(self.message_ids), text)})

    async def press(self, kind: str | None, uid: int, data: str, message_id: int) -> None:
        query = {
            "id": f"cq{next(self.update_ids)}",
            "from": {"id": uid, "is_bot": False, "first_name": "Bench", "language_code": "ru"},
            "chat_instance": f"ci{uid}",
            "data": data,
            "message": {
                "message_id": message_id,
                "date": int(time.time()),
                "chat": {"id": uid, "type": "private"},
                "from": BOT_USER,
                "text": "q",
            },
        }
        await self.feed(kind, {"callback_query": query})


async def build_ours(db_path: Path) -> tuple[Any, Any, SqlCounter]:
    from bot.bank import default_bank_path, load_bank
    from bot.config import load_settings
    from bot.tg.app import build_application

    settings = load_settings(
        bot_token=TOKEN,
        database_url=f"sqlite:///{db_path}",
        telegram_api_url="http://127.0.0.1:9",
        log_level="WARNING",
        flood_burst=0,  # the harness's user is a script (see bench.common.our_bot)
    )
    bank = load_bank(default_bank_path())
    app = build_application(settings, bank, TOKEN)
    request = make_request_class()()
    app.bot._request = (request, request)  # the composition root as is, only the transport swapped
    await app.initialize()
    services = app.bot_data["services"]
    await services.db.migrate()
    from bot.core import grading

    for _ in grading.warm_up(bank.questions.values(), bank.lexicon):  # as the bot does after a start
        pass
    import gc

    from bot.tg.app import _freeze_heap

    _freeze_heap()  # as the bot process does once the grader is ready (full GC passes skip the start-up objects)
    assert gc.get_freeze_count() > 0
    return app, request, SqlCounter(services.db.sync_engine)


async def build_echo() -> tuple[Any, Any]:
    from telegram import Update
    from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert update.message is not None and update.message.text is not None
        await update.message.reply_text(update.message.text)

    request = make_request_class()()
    app = (
        ApplicationBuilder()
        .token(TOKEN)
        .base_url("http://127.0.0.1:9/bot")
        .request(request)
        .get_updates_request(request)
        .concurrent_updates(64)
        .build()
    )
    app.add_handler(MessageHandler(filters.TEXT, echo))
    await app.initialize()
    return app, request


def _reveal_data(request: Any, uid: int) -> tuple[str, int]:
    last = request.last[uid]
    markup = json.loads(last["reply_markup"])
    data = next(
        b["callback_data"]
        for row in markup["inline_keyboard"]
        for b in row
        if b.get("callback_data", "").startswith("a:")
    )
    return data, int(last["message_id"])


async def cycle(h: Harness, uid: int, i: int, measure: bool = True) -> None:
    def k(name: str) -> str | None:
        return name if measure else None

    await h.text(k("/q"), uid, "/q")
    data, mid = _reveal_data(h.request, uid)
    await h.text(k("answer"), uid, ANSWER)
    await h.press(k("reveal"), uid, data, mid)
    await h.text(k("/search"), uid, f"/search {SEARCHES[i % len(SEARCHES)]}")
    await h.text(k("/glossary"), uid, f"/glossary {GLOSSARY[i % len(GLOSSARY)]}")


async def warm_ours(h: Harness, users: int, uid0: int) -> None:
    for uid in range(uid0, uid0 + users):  # first contact: the chat/user upsert (once per 10 minutes per pair)
        await h.text(None, uid, "/help")
    await cycle(h, uid0 + users, 0, measure=False)  # statement caches, lazy imports


async def run_ours(h: Harness, users: int, cycles: int, uid0: int) -> None:
    await warm_ours(h, users, uid0)
    for i in range(cycles):
        await cycle(h, uid0 + i % users, i)


async def run_interleaved(he: Harness, h: Harness, users: int, cycles: int, uid0: int) -> None:
    """Echo and ours, cycle by cycle, so that the machine's noise hits them alike."""
    for i in range(20):
        await he.text(None, uid0 + i, "warm-up")
    await warm_ours(h, users, uid0)
    for i in range(cycles):
        for j in range(5):
            await he.text("echo", uid0 + (i * 5 + j) % 50, f"{ANSWER[:60]} {i}")
        await cycle(h, uid0 + i % users, i)


def _bucket(filename: str) -> str:
    if filename.startswith("<") or filename == "~":
        return "built-in (C functions, incl. sqlite3/json/select)"
    f = filename.replace("\\", "/")
    if "/site-packages/" in f:
        return f.split("/site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if "/bot/" in f and "/site-packages/" not in f:
        return "bot/" + f.split("/bot/", 1)[1]
    if "/lib/python3" in f:
        return "stdlib/" + f.split("/lib/python3", 1)[1].split("/", 2)[1].removesuffix(".py")
    return f


def report_cprofile(prof: cProfile.Profile | pstats.Stats, updates: int, top: int) -> list[list[str]]:
    stats = prof if isinstance(prof, pstats.Stats) else pstats.Stats(prof)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(v[2] for v in entries.values())
    buckets: dict[str, float] = defaultdict(float)
    funcs = []
    for (filename, line, name), (_cc, nc, tt, ct, _callers) in entries.items():
        label = name if filename == "~" else f"{_bucket(filename)}:{line}({name})"
        if filename == "~":
            buckets[
                _bucket(filename)
                if "select" not in name and "poll" not in name
                else "waiting in the event loop (epoll: DB thread, I/O)"
            ] += tt
        else:
            b = _bucket(filename)
            buckets["bot (all modules)" if b.startswith("bot/") else b] += tt
        funcs.append((tt, ct, nc, label))
    banner(f"profile: self time by package ({total * 1e6 / updates:,.0f} µs profiled per update)")
    rows = sorted(buckets.items(), key=lambda kv: -kv[1])[:14]
    print(
        table(
            ["package", "self time %", "µs/update"],
            [[k, f"{v / total * 100:.1f}", fmt(v * 1e6 / updates, 0)] for k, v in rows],
        )
    )
    banner(f"profile: top {top} functions by self time")
    funcs.sort(reverse=True)
    print(
        table(
            ["function", "self %", "cum %", "calls/update"],
            [
                [label[-90:], f"{tt / total * 100:.1f}", f"{ct / total * 100:.1f}", fmt(nc / updates, 1)]
                for tt, ct, nc, label in funcs[:top]
            ],
        )
    )
    banner("profile: cumulative time of our own functions")
    ours = [(ct, tt, nc, label) for tt, ct, nc, label in funcs if label.startswith("bot/")]
    ours.sort(reverse=True)
    print(
        table(
            ["function", "cum %", "self %", "calls/update"],
            [
                [label[-90:], f"{ct / total * 100:.1f}", f"{tt / total * 100:.1f}", fmt(nc / updates, 1)]
                for ct, tt, nc, label in ours[:top]
            ],
        )
    )
    return [[k, f"{v / total * 100:.1f}"] for k, v in rows]


async def _profiled(fn: Callable[[], Awaitable[None]], profiler: str, top: int, updates: int) -> None:
    if profiler == "pyinstrument":
        from pyinstrument import Profiler

        p = Profiler(async_mode="enabled", interval=0.0005)
        p.start()
        await fn()
        p.stop()
        print(p.output_text(unicode=True, color=False, show_all=False, short_mode=True)[:12000])
        return
    prof = cProfile.Profile()
    prof.enable()
    await fn()
    prof.disable()
    report_cprofile(prof, updates, top)


def _stats(rows: list[tuple[float, float, int, float, int]]) -> dict[str, float]:
    wall = [x[0] * 1e6 for x in rows]
    s = summary(wall)
    return {
        "wall_p50": s["p50"],
        "wall_mean": s["mean"],
        "wall_p99": s["p99"],
        "cpu_mean": sum(x[1] for x in rows) * 1e6 / len(rows),
        "calls": sum(x[2] for x in rows) / len(rows),
        "sql_us": sum(x[3] for x in rows) * 1e6 / len(rows),
        "sql_n": sum(x[4] for x in rows) / len(rows),
    }


async def db_unit_costs(url_path: Path, rounds: int = 7, per_round: int = 40) -> list[list[str]]:
    """What one unit of database work costs. The operations run interleaved, round after round, and
    each figure is the median of the round medians, so that the machine's noise hits them alike."""
    from sqlalchemy import literal, select

    from bot.db import chat_store
    from bot.db.engine import Database
    from bot.db.models import Chat, User

    chats, users = Chat.__table__, User.__table__
    dbs = {"current": Database(f"sqlite:///{url_path}")}
    for db in dbs.values():
        await db.migrate()
    async with dbs["current"].write() as s:
        await chat_store.upsert_chat(s, chat_store.ChatInfo(42, "private", None))
        await chat_store.upsert_user(s, chat_store.UserInfo(42, "A"))

    async def get_one(db: Any) -> None:
        async with db.read() as s:
            await chat_store.get_chat(s, 42)

    async def get_two(db: Any) -> None:
        async with db.read() as s:
            await chat_store.get_chat(s, 42)
            await chat_store.get_user(s, 42)

    async def orm_join(db: Any) -> None:
        async with db.read() as s:
            stmt = select(Chat, User).select_from(Chat).where(Chat.id == 42)
            (await s.execute(stmt.outerjoin(User, User.id == literal(42)))).first()

    async def core_join(db: Any) -> None:
        async with db.read() as s:
            stmt = select(chats, users).select_from(chats.outerjoin(users, users.c.id == literal(42)))
            (await s.execute(stmt.where(chats.c.id == 42))).first()

    async def write_one(db: Any) -> None:
        async with db.write() as s:
            await chat_store.set_chat_fields(s, 42, title="x")

    ops = (
        ("read session, 1 ORM get", get_one),
        ("read session, get chat + get user (the middleware)", get_two),
        ("read session, chat+user in one ORM SELECT", orm_join),
        ("read session, chat+user in one Core SELECT (rows, no ORM)", core_join),
        ("write session, 1 UPDATE + commit", write_one),
    )
    found: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _ in range(rounds):
        for name, fn in ops:
            for label, db in dbs.items():
                for _ in range(5):
                    await fn(db)
                times = []
                for _ in range(per_round):
                    t0 = time.perf_counter()
                    await fn(db)
                    times.append((time.perf_counter() - t0) * 1e6)
                found[(name, label)].append(summary(times)["p50"])
    for db in dbs.values():
        await db.close()
    rows = []
    for name, _ in ops:
        rows.append([name, *(fmt(median(found[(name, label)]), 0) for label in dbs)])
    return rows


async def main_async(args: argparse.Namespace) -> int:
    work = tempdir("inprocess")
    try:
        ours, request, sql = await build_ours(work / "bot.db")
        echo, echo_request = await build_echo()
        h = Harness(ours, request, sql)
        he = Harness(echo, echo_request, None)
        runs: dict[str, dict[str, list[dict[str, float]]]] = defaultdict(lambda: defaultdict(list))
        uid = 1_000_000
        for r in range(args.repeats):
            for harness in (he, h):
                harness.samples.clear()
            await run_interleaved(he, h, args.users, args.cycles, uid + 100)
            uid += 10_000
            for name, harness in (("echo", he), ("current", h)):
                for kind, rows in harness.samples.items():
                    runs[name][kind].append(_stats(rows))
            line = ", ".join(f"{k} {runs['current'][k][-1]['wall_mean']:,.0f}" for k in runs["current"])
            print(
                f"  run {r + 1}: mean µs/update: echo {runs['echo']['echo'][-1]['wall_mean']:,.0f}, {line}", flush=True
            )
        base = median(x["wall_mean"] for x in runs["echo"]["echo"])
        rows = []
        kinds = ("/q", "answer", "reveal", "/search", "/glossary")
        for kind in ("echo", *kinds):
            rs = runs["echo" if kind == "echo" else "current"][kind]
            mean = median(x["wall_mean"] for x in rs)
            row = [
                kind if kind != "echo" else "baseline: PTB echo",
                fmt(mean, 0),
                fmt(median(x["wall_p50"] for x in rs), 0),
                fmt(median(x["wall_p99"] for x in rs), 0),
                fmt(median(x["cpu_mean"] for x in rs), 0),
                fmt(mean / base, 1),
                fmt(median(x["calls"] for x in rs), 1),
                fmt(median(x["sql_n"] for x in rs), 1),
                fmt(median(x["sql_us"] for x in rs), 0),
            ]
            rows.append(row)
        banner(f"µs per update (medians over {args.repeats} repeats of {args.cycles} updates per kind)")
        headers = ["update", "wall µs (mean)", "p50", "p99", "CPU µs", "× echo", "API calls", "SQL stmts", "SQL µs"]
        print(table(headers, rows))

        def mix(name: str) -> float:
            return median(
                sum(runs[name][k][i]["wall_mean"] for k in ("/q", "answer", "reveal")) / 3 for i in range(args.repeats)
            )

        banner("database unit costs (p50 µs, same machine, same run)")
        print(
            table(
                ["operation", "current"],
                await db_unit_costs(work / "units.db"),
            )
        )
        if args.profile_cycles:
            banner(f"profiling {args.profile_cycles} cycles of the current code with {args.profiler}")

            async def go() -> None:
                await run_ours(h, args.users, args.profile_cycles, uid + 500_000)

            await _profiled(go, args.profiler, args.top, args.profile_cycles * 5)
        print(
            f"\nSUMMARY inprocess: /q+answer+reveal mean {mix('current'):,.0f} µs/update = "
            f"{mix('current') / base:.0f}× the PTB echo ({base:,.0f} µs); /search "
            f"{median(x['wall_mean'] for x in runs['current']['/search']):,.0f} µs, /glossary "
            f"{median(x['wall_mean'] for x in runs['current']['/glossary']):,.0f} µs"
        )
        await ours.bot_data["services"].db.close()
        await ours.shutdown()
        await echo.shutdown()
    finally:
        rmtree(work)
    return 0


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--cycles", type=int, default=200, help="updates per kind per repeat")
    p.add_argument("--users", type=int, default=50)
    p.add_argument("--profile-cycles", type=int, default=150, help="0: no profile")
    p.add_argument("--profiler", choices=("cprofile", "pyinstrument"), default="cprofile")
    p.add_argument("--top", type=int, default=25)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(main_async(args))
