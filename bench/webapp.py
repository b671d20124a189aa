"""The Mini App's API with 10,000 answers for one user: the real bot process (SQLite, the shipped
bank) serves /app/api/ on METRICS_PORT against the fake Bot API; each endpoint is called over HTTP
(gzip, a signed initData) sequentially, and the round trip is timed on the client. Target: p95 under
50 ms per response.

The database is filled before the bot starts: 10,000 answers of the user over a year (about 27 a
day in two sittings; ``--spread``: at random minutes over 10 hours, the worst case for the heatmap;
over every question of the bank, each graded, a third self-assessed), one FSRS card per
question reviewed with its answers' grades, plus 20,000 answers of 200 other users (so the indexes
have work to do)."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.common import BenchFake, banner, fmt, our_bot, percentile, rmtree, table, tempdir
from tests.fakebot import TOKEN

USER = 4_200_001


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--answers", type=int, default=10_000, help="answers of the measured user")
    p.add_argument("--others", type=int, default=20_000, help="answers of other users")
    p.add_argument("--requests", type=int, default=200, help="requests per endpoint")
    p.add_argument(
        "--spread",
        action="store_true",
        help="answers at random minutes over 10 hours a day (every hour busy: the worst case for the heatmap "
        "query) instead of 1-3 sittings a day",
    )


def _migrate(db_path: Path) -> None:
    from bot.db.engine import Database

    async def go() -> None:
        db = Database(f"sqlite:///{db_path}")
        await db.migrate()
        await db.close()

    asyncio.run(go())


def fill(db_path: Path, answers: int, others: int, *, spread: bool = False) -> dict[str, int]:
    """Answers and cards, written with plain sqlite3 (the bot's schema, migrated first)."""
    from bot.bank import default_bank_path, load_bank
    from bot.core import srs

    bank = load_bank(default_bank_path())
    questions = list(bank.questions.values())
    rng = random.Random(7)
    now = datetime.now(UTC)
    _migrate(db_path)
    fmt_at = "%Y-%m-%d %H:%M:%S.%f"
    with sqlite3.connect(db_path) as conn:
        users = [(USER, "Bench"), *((USER + i, f"Other{i}") for i in range(1, 201))]
        conn.executemany(
            "insert into users (id, first_name, board_opt_out, created_at, last_seen_at) values (?, ?, 0, ?, ?)",
            [(uid, name, now.strftime(fmt_at), now.strftime(fmt_at)) for uid, name in users],
        )
        conn.execute(
            "insert into chats (id, type, created_at, push_enabled, push_weekdays_only, push_kind)"
            " values (?, 'private', ?, 0, 0, 'question')",
            (USER, now.strftime(fmt_at)),
        )
        rows = []
        history: dict[str, list[tuple[datetime, float, int | None]]] = {}
        per_day = answers / 365
        sittings = [now.replace(hour=h, minute=0) for h in (8, 13, 20)]
        for i in range(answers):
            q = questions[i % len(questions)]
            day = int(365 * (answers - i) / answers)
            if spread:
                at = now - timedelta(days=day, minutes=rng.randint(0, 600))
            else:  # 1-3 sittings a day, an answer every 2 minutes
                k = int(i % per_day)
                sitting = sittings[day % 3 if k < per_day / 2 else (day + 1) % 3]
                at = sitting - timedelta(days=day) + timedelta(minutes=2 * (k % 15))
            coverage = rng.random()
            covered = ",".join(str(k) for k in range(len(q.key_points)) if rng.random() < coverage)
            grade = rng.choice((1, 2, 3)) if i % 3 == 0 else None
            text = f"Ответ {i}: " + " ".join(rng.choice(("активации", "память", "градиент", "LoRA")) for _ in range(30))
            rows.append((q.id, USER, USER, text, 0, coverage, covered, grade, at.strftime(fmt_at)))
            history.setdefault(q.id, []).append((at, coverage, grade))
        for i in range(others):
            q = questions[rng.randrange(len(questions))]
            at = now - timedelta(days=rng.uniform(0, 365))
            other = USER + 1 + i % 200
            rows.append((q.id, other, other, "x" * 200, 0, 0.5, "0", None, at.strftime(fmt_at)))
        conn.executemany(
            "insert into answers (question_id, user_id, chat_id, text, edited, coverage, covered, self_grade,"
            " created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        cards = []
        for qid, reviews in history.items():
            state = None
            result = None
            for at, coverage, grade in sorted(reviews)[-20:]:  # the last 20 reviews of the card
                result = srs.review(state, srs.rating_for(grade, coverage), at)
                state = result.state
            assert result is not None
            cards.append((USER, qid, result.state, result.due.strftime(fmt_at), len(reviews), result.rating))
        conn.executemany(
            "insert into cards (user_id, question_id, state, due, reps, last_rating, auto_rated)"
            " values (?, ?, ?, ?, ?, ?, 0)",
            cards,
        )
    return {"answers": answers, "others": others, "cards": len(cards), "questions": len(questions)}


async def measure(port: int, requests: int, db_path: Path) -> list[tuple[str, list[float], int]]:
    import aiohttp

    from bot.core import initdata

    init = initdata.sign_user({"id": USER, "first_name": "Bench"}, TOKEN, auth_date=int(time.time()))
    headers = {"Authorization": f"tma {init}", "Accept-Encoding": "gzip"}
    base = f"http://127.0.0.1:{port}/app/api/"
    paths = ["me", "progress", "answers", "answers?topic=lora", "answers?grade=good", "answers?grade=3", "deep page",
             "topics", "search?q=чекпоинтов", "questions/q463", "glossary"]  # fmt: skip
    out = []
    async with aiohttp.ClientSession(headers=headers) as session:
        async with session.get(base + "answers") as response:  # a cursor 400 answers back for "deep page"
            cursor = (await response.json())["items"][0]["id"] - 400
        for path in paths:
            url = base + (f"answers?before={cursor}" if path == "deep page" else path)
            times: list[float] = []
            size = 0
            for i in range(requests + 5):
                start = time.perf_counter()
                async with session.get(url) as response:
                    body = await response.read()
                    assert response.status == 200, (path, response.status, body[:200])
                if i >= 5:  # the first few warm up caches
                    times.append((time.perf_counter() - start) * 1000)
                size = len(body)
            out.append((path, times, size))
        # the first opening after a new answer: the cached digest is extended with it
        times = []
        for i in range(50):
            with sqlite3.connect(db_path) as conn:
                conn.execute(
                    "insert into answers (question_id, user_id, chat_id, text, edited, coverage, covered, created_at)"
                    " values ('q463', ?, ?, 'new', 0, 0.5, '0,1', ?)",
                    (USER, USER, datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")),
                )
            start = time.perf_counter()
            async with session.get(base + "progress") as response:
                body = await response.read()
                assert response.status == 200 and json.loads(body)["totals"]["answers"] > 10_000 + i
            times.append((time.perf_counter() - start) * 1000)
        out.append(("progress after a new answer", times, len(body)))
    return out


def cold_progress(db_path: Path, repeats: int) -> tuple[list[float], list[float]]:
    """The progress screen in-process (the service call alone, ms): in a new process (an empty
    cache: the digest kept in the database, extended with 3 answers given since), and made anew
    from the answers (``reuse=False``: a user's first opening ever, or after a deletion)."""
    from zoneinfo import ZoneInfo

    from bot.bank import default_bank_path, load_bank
    from bot.catalog import Catalog
    from bot.db.engine import Database
    from bot.services import webapp_progress
    from bot.services.webapp import Viewer

    catalog = Catalog.build(load_bank(default_bank_path()))
    viewer = Viewer(USER, "ru", "Europe/Moscow", ZoneInfo("Europe/Moscow"), True)

    async def go() -> tuple[list[float], list[float]]:
        db = Database(f"sqlite:///{db_path}")
        restarted, anew = [], []
        for i in range(repeats + 3):
            with sqlite3.connect(db_path) as conn:
                conn.executemany(
                    "insert into answers (question_id, user_id, chat_id, text, edited, coverage, covered, created_at)"
                    " values ('q463', ?, ?, 'new', 0, 0.5, '0,1', ?)",
                    [(USER, USER, datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f"))] * 3,
                )
            for reuse, out in ((True, restarted), (False, anew)):
                start = time.perf_counter()
                await webapp_progress.progress(db, catalog, viewer, now=datetime.now(UTC),
                                               cache=webapp_progress.ProgressCache(), reuse=reuse)  # fmt: skip
                if i >= 3:
                    out.append((time.perf_counter() - start) * 1000)
        await db.close()
        return restarted, anew

    return asyncio.run(go())


def run(args: argparse.Namespace) -> int:
    work = tempdir("webapp")
    fake = BenchFake().start()
    try:
        banner(f"webapp: filling the database ({args.answers} answers for the user, {args.others} of others)")
        counts = fill(work / "bot.db", args.answers, args.others, spread=args.spread)
        print(json.dumps(counts))
        port = free_port()
        bot = our_bot(fake, work, {"METRICS_PORT": str(port)}).start()
        try:
            results = asyncio.run(measure(port, args.requests, work / "bot.db"))
        finally:
            bot.stop()
        restarted, cold = cold_progress(work / "bot.db", 30)
        banner(f"webapp: {args.requests} sequential requests per endpoint, client-side round trip (ms)")
        rows = []
        worst = 0.0
        for path, times, size in results:
            p95 = percentile(times, 95)
            worst = max(worst, p95)
            rows.append([path, fmt(percentile(times, 50)), fmt(p95), fmt(percentile(times, 99)), fmt(max(times)),
                         f"{size / 1024:.1f}"])  # fmt: skip
        print(table(["endpoint", "p50", "p95", "p99", "max", "KB (gzip)"], rows))
        cold_p95, restarted_p95 = percentile(cold, 95), percentile(restarted, 95)
        print(f"progress in a new process (the stored digest + 3 new answers; the service call in-process, "
              f"30 calls): p50 {percentile(restarted, 50):.1f} ms, p95 {restarted_p95:.1f} ms")  # fmt: skip
        print(f"progress made anew from the answers (a first opening ever; 30 calls): "
              f"p50 {percentile(cold, 50):.1f} ms, p95 {cold_p95:.1f} ms")  # fmt: skip
        verdict = "met" if max(worst, restarted_p95) < 50 else "NOT met"
        print(f"SUMMARY webapp: worst p95 {worst:.1f} ms over {len(results)} endpoints with {args.answers} "
              f"answers, {restarted_p95:.1f} ms in a new process (target < 50 ms: {verdict}); "
              f"made anew p95 {cold_p95:.1f} ms")  # fmt: skip
    finally:
        fake.stop()
        rmtree(work)
    return 0
