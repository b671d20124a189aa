"""Memory: RSS of the running bot process (``python -m bot run`` against the fake Bot API) in three
set-ups, after start-up and after traffic, with the bare PTB echo bot as the baseline:

1. the shipped bank, a new database;
2. the shipped bank, a database holding 100,000 users and chats (and 10 seen-question rows each),
   with traffic from many distinct users of them (/q + an answer each, 50 at a time), so the
   per-user state the process keeps (recently-touched cache, per-chat locks, statement caches)
   is exercised;
3. a 10,000-question bank (bench.synth.write_yaml_bank, validated by load_bank at start).

RSS is VmRSS from /proc after the traffic settles, and VmHWM (the peak). Target: < 200 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

from bench.common import BenchFake, banner, echo_bot, fmt, median, our_bot, proc_status_kb, rmtree, table, tempdir


def seed_users(db_path: Path, n: int, seen_per_user: int = 10, uid0: int = 10_000_000) -> float:
    """100k users and their private chats (+ seen rows) straight into a migrated SQLite file."""
    from bot.bank import default_bank_path, load_bank
    from bot.db.engine import Database

    async def migrate() -> None:
        db = Database(f"sqlite:///{db_path}")
        await db.migrate()
        await db.close()

    asyncio.run(migrate())
    t0 = time.perf_counter()
    qids = list(load_bank(default_bank_path()).questions)
    rng = random.Random(3)
    now = "2026-11-30 10:00:00"
    with sqlite3.connect(db_path) as conn:
        conn.executemany(
            "insert into users (id, first_name, username, language, tg_language, timezone, board_opt_out, "
            "created_at, last_seen_at) values (?,?,?,?,?,?,?,?,?)",
            ((uid0 + i, f"User{i}", None, None, "ru", None, 0, now, now) for i in range(n)),
        )
        conn.executemany(
            "insert into chats (id, type, title, push_enabled, push_weekdays_only, push_kind, created_at) "
            "values (?,?,?,?,?,?,?)",
            ((uid0 + i, "private", None, 0, 0, "question", now) for i in range(n)),
        )
        conn.executemany(
            "insert into chat_seen (chat_id, question_id, count) values (?,?,?)",
            ((uid0 + i, qid, 1) for i in range(n) for qid in rng.sample(qids, seen_per_user)),
        )
    return time.perf_counter() - t0


async def _traffic(fake: BenchFake, uids: list[int], concurrency: int) -> int:
    from bench.common import message_update
    from bench.updates import ANSWER, Timeout, _next

    sem = asyncio.Semaphore(concurrency)
    errors = 0

    async def user(uid: int) -> None:
        nonlocal errors
        async with sem:
            q = fake._queue(uid)
            fake.private_chat(uid)
            try:
                await fake.push(message_update(fake, uid, "/q"))
                await _next(q, ("sendMessage",), 60)
                await fake.push(message_update(fake, uid, ANSWER))
                await _next(q, ("sendMessage",), 60)
            except Timeout:
                errors += 1
            fake.events.pop(uid, None)

    await asyncio.gather(*(user(u) for u in uids))
    return errors


def _measure(label: str, proc: Any, fake: BenchFake, uids: list[int], concurrency: int) -> dict[str, Any]:
    proc.start(timeout=300)
    time.sleep(1.0)
    idle = proc_status_kb(proc.pid)
    errors = 0
    t0 = time.monotonic()
    if uids:
        errors = fake.run(_traffic(fake, uids, concurrency), timeout=1800)
    took = time.monotonic() - t0
    time.sleep(1.0)
    after = proc_status_kb(proc.pid)
    proc.stop()
    print(
        f"  {label}: RSS idle {idle['VmRSS'] / 1024:.0f} MB, after {len(uids)} users {after['VmRSS'] / 1024:.0f} MB, "
        f"peak {after['VmHWM'] / 1024:.0f} MB ({took:.0f} s of traffic, {errors} errors)",
        flush=True,
    )
    return {
        "idle": idle["VmRSS"] / 1024,
        "after": after["VmRSS"] / 1024,
        "peak": after["VmHWM"] / 1024,
        "errors": errors,
    }


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--users", type=int, default=100_000, help="users and chats in the database")
    p.add_argument("--active", type=int, default=500, help="distinct users sending /q + an answer")
    p.add_argument("--concurrency", type=int, default=50)
    p.add_argument("--bank-questions", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=1, help="starts per set-up (RSS is steady; 1 is enough)")


def run(args: argparse.Namespace) -> int:
    from bench import synth

    work = tempdir("memory")
    fake = BenchFake().start()
    rows = []
    try:
        banner(f"seeding {args.users:,} users and chats into SQLite; writing a {args.bank_questions:,}-question bank")
        (work / "big").mkdir()
        seeded = seed_users(work / "big" / "bot.db", args.users)
        info = synth.write_yaml_bank(work / "bank10k", args.bank_questions)
        print(f"seeded in {seeded:.1f} s; bank: {info['files']} files, {info['bytes'] / 1e6:.0f} MB")
        rng = random.Random(5)
        active_seeded = [10_000_000 + u for u in rng.sample(range(args.users), min(args.active, args.users))]
        fresh = list(range(20_000_000, 20_000_000 + min(args.active, 300)))
        setups = [
            ("PTB echo bot (baseline)", lambda wd: echo_bot(fake, wd), []),
            ("our bot, shipped bank, new database", lambda wd: our_bot(fake, wd), fresh),
            (
                f"our bot, shipped bank, {args.users:,} users in the database",
                lambda wd: our_bot(fake, work / "big", name="big"),
                active_seeded,
            ),
            (
                f"our bot, {args.bank_questions:,}-question bank",
                lambda wd: our_bot(fake, wd, {"BANK_PATH": str(work / "bank10k")}, name="bank10k"),
                fresh,
            ),
        ]
        results: dict[str, list[dict[str, Any]]] = {}
        for r in range(args.repeats):
            for label, make, uids in setups:
                wd = work / f"{r}-{len(results.get(label, []))}-{abs(hash(label)) % 10_000}"
                wd.mkdir()
                traffic = [u + r * 1_000_000 for u in uids] if uids is fresh else uids
                results.setdefault(label, []).append(_measure(label, make(wd), fake, traffic, args.concurrency))
        for label, _, uids in setups:
            rs = results[label]
            after = median(x["after"] for x in rs)
            rows.append(
                [
                    label,
                    fmt(median(x["idle"] for x in rs), 0),
                    len(uids),
                    fmt(after, 0),
                    fmt(median(x["peak"] for x in rs), 0),
                    "" if label.startswith("PTB") else ("yes" if after < 200 else "NO"),
                ]
            )
        banner("RSS in MB")
        print(table(["set-up", "after start", "active users", "after traffic", "peak (VmHWM)", "< 200 MB"], rows))
        worst = max(median(x["peak"] for x in results[label]) for label, _, _ in setups[1:])
        echo = float(rows[0][3])

        def ratio(row: list[object]) -> str:
            # issue 34: the shipped bank within 2.5× the echo's RSS, a 10,000-question bank within 3.5×
            target = 3.5 if "10,000" in str(row[0]) or "10k" in str(row[0]) else 2.5
            r = float(str(row[3])) / echo
            return f"{row[0]}: {row[3]} MB ({r:.1f}×, target ≤ {target}× {'met' if r <= target else 'NOT met'})"

        parts = "; ".join(ratio(r) for r in rows[1:])
        print(
            f"\nSUMMARY memory: RSS after traffic against the PTB echo's {rows[0][3]} MB — {parts}; "
            f"worst peak {worst:.0f} MB"
        )
    finally:
        fake.stop()
        rmtree(work)
    return 0
