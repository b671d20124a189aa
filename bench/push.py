"""Daily pushes at scale.

Planning (``--part plan``), on SQLite and on PostgreSQL (a throwaway server, tests/pg.py):
100,000 subscribed chats seeded straight into a migrated database, spread over every IANA zone,
half of them at popular local times (08:00, 09:00, 09:30, 10:00, 20:00) and half at any minute,
5 % weekdays-only, 5 % groups with an evening reveal, each with the next push instant the bot would
store; plus ``--history-days`` days of sent deliveries (the table the evening-reveal query reads).
For each batch size PushService uses — 1,350 at SEND_RATE=30 and 45,000 at SEND_RATE=1000 — "now"
is set to when enough chats are due for full batches, and the benchmark times:
- the due-chat query exactly as PushPlanner.plan issues it (ORM rows, LIMIT = the batch) and a
  count of due chats;
- PushPlanner.plan(now, batch): successive plans of the small batch, then one of the big batch
  (claim + move next_push_at; chats more than PUSH_GRACE_HOURS late are recorded as skipped);
- PushPlanner.due_reveals(now), which every tick runs too.
Target: < 1 s for planning a due batch.

Sending (``--part sender``): our bot process (``python -m bot run``, SQLite) with N chats due, against
the fake Bot API (no rate enforcement), at SEND_RATE=30 and at SEND_RATE=1000 (PAID_BROADCAST=true):
the achieved rate between the first and the last push recorded at the fake, and the bot process's
CPU time per message (from /proc, sampled every 20 ms) over the same window.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import BenchFake, CpuSampler, banner, fmt, median, our_bot, rmtree, table, tempdir

POPULAR = [8 * 60, 9 * 60, 9 * 60 + 30, 10 * 60, 20 * 60]


def make_rows(n: int, base: datetime, seed: int = 11) -> list[tuple[Any, ...]]:
    """(id, type, timezone, minute, weekdays_only, reveal_minute, next_push_at, next_push_date)."""
    from zoneinfo import available_timezones

    from bot.core.schedule import get_tz, next_push

    rng = random.Random(seed)
    zones = []
    for z in sorted(available_timezones()):
        try:
            get_tz(z)
        except Exception:
            continue
        zones.append(z)
    rows = []
    for i in range(n):
        zone = rng.choice(zones)
        minute = rng.choice(POPULAR) if rng.random() < 0.5 else rng.randrange(24 * 60)
        weekdays = rng.random() < 0.05
        group = rng.random() < 0.05
        chat_id = -(1_000_000_000_000 + i) if group else 50_000_000 + i
        instant, day = next_push(base - timedelta(hours=1), minute, get_tz(zone), weekdays_only=weekdays)
        rows.append(
            (chat_id, "group" if group else "private", zone, minute, weekdays, 20 * 60 if group else None, instant, day)
        )
    return rows


def seed_sqlite(path: Path, rows: list[tuple[Any, ...]], history_days: int, base: datetime) -> None:
    def naive(d: datetime) -> str:
        return d.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")

    now = naive(base)
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "insert into chats (id, type, title, timezone, push_enabled, push_minute, push_weekdays_only, push_kind,"
            " reveal_minute, next_push_at, next_push_date, created_at) values (?,?,?,?,1,?,?,'question',?,?,?,?)",
            (
                (cid, kind, None, zone, minute, int(wd), reveal, naive(at), day.isoformat(), now)
                for cid, kind, zone, minute, wd, reveal, at, day in rows
            ),
        )
        for d in range(1, history_days + 1):
            conn.executemany(
                "insert into deliveries (chat_id, local_date, due_at, status, claimed_by, lease_until, attempts,"
                " question_id, message_id, sent_at, revealed_at) values (?,?,?,'sent','seed',?,1,'q43',?,?,?)",
                (
                    (
                        cid,
                        (day - timedelta(days=d)).isoformat(),
                        naive(at - timedelta(days=d)),
                        naive(at - timedelta(days=d)),
                        1000 + d,
                        naive(at - timedelta(days=d)),
                        naive(at - timedelta(days=d) + timedelta(hours=10)) if reveal else None,
                    )
                    for cid, kind, zone, minute, wd, reveal, at, day in rows
                ),
            )


async def seed_postgres(url: str, rows: list[tuple[Any, ...]], history_days: int, base: datetime) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.copy_records_to_table(
            "chats",
            records=[
                (cid, kind, zone, True, minute, wd, "question", reveal, at, day, base)
                for cid, kind, zone, minute, wd, reveal, at, day in rows
            ],
            columns=[
                "id",
                "type",
                "timezone",
                "push_enabled",
                "push_minute",
                "push_weekdays_only",
                "push_kind",
                "reveal_minute",
                "next_push_at",
                "next_push_date",
                "created_at",
            ],
        )
        for d in range(1, history_days + 1):
            await conn.copy_records_to_table(
                "deliveries",
                records=[
                    (
                        cid,
                        day - timedelta(days=d),
                        at - timedelta(days=d),
                        "sent",
                        "seed",
                        at - timedelta(days=d),
                        1,
                        "q43",
                        1000 + d,
                        at - timedelta(days=d),
                        (at - timedelta(days=d) + timedelta(hours=10)) if reveal else None,
                    )
                    for cid, kind, zone, minute, wd, reveal, at, day in rows
                ],
                columns=[
                    "chat_id",
                    "local_date",
                    "due_at",
                    "status",
                    "claimed_by",
                    "lease_until",
                    "attempts",
                    "question_id",
                    "message_id",
                    "sent_at",
                    "revealed_at",
                ],
            )
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


async def time_planning(url: str, nows: dict[int, datetime], batches: list[int], plans: int) -> dict[str, Any]:
    from sqlalchemy import func, select

    from bot.db.engine import Database
    from bot.db.models import Chat
    from bot.push.planner import PushPlanner

    db = Database(url)
    planner = PushPlanner(
        db, instance_id="bench", default_zone="Europe/Moscow", grace=timedelta(hours=3), lease=timedelta(seconds=120)
    )
    out: dict[str, Any] = {}
    now = nows[batches[0]]
    async with db.read() as session:
        t0 = time.perf_counter()
        out["due_count"] = (
            await session.execute(
                select(func.count()).select_from(Chat).where(Chat.push_enabled.is_(True), Chat.next_push_at <= now)
            )
        ).scalar_one()
        out["count_s"] = time.perf_counter() - t0
    for batch in batches:
        times = []
        for _ in range(3):
            async with db.read() as session:
                due = select(Chat).where(Chat.push_enabled.is_(True), Chat.next_push_at <= nows[batch])
                due = due.order_by(Chat.next_push_at).limit(batch)
                t0 = time.perf_counter()
                n = len(list((await session.execute(due)).scalars()))
                times.append(time.perf_counter() - t0)
        out[f"query_{batch}"] = (median(times), n)
    t0 = time.perf_counter()
    reveals = await planner.due_reveals(now + timedelta(hours=12))
    out["reveals_s"] = time.perf_counter() - t0
    out["reveals_n"] = len(reveals)
    for batch in batches:
        times, claims = [], []
        for _ in range(plans if batch < 10_000 else 1):
            t0 = time.perf_counter()
            try:
                result = await planner.plan(nows[batch], batch)
            except Exception as exc:
                message = str(getattr(exc, "orig", None) or exc).splitlines()[0][:90]
                out[f"plan_{batch}"] = f"FAILED after {time.perf_counter() - t0:.1f} s: {type(exc).__name__}: {message}"
                break
            times.append(time.perf_counter() - t0)
            claims.append((len(result.claims), result.skipped))
        else:
            out[f"plan_{batch}"] = (median(times), median(c + k for c, k in claims), claims[-1])
    await db.close()
    return out


def plan_part(args: argparse.Namespace, work: Path) -> list[list[str]]:
    from bot.db.engine import Database

    base = datetime.now(UTC).replace(microsecond=0)
    t0 = time.perf_counter()
    rows = make_rows(args.chats, base)
    print(f"computed {len(rows):,} chats' next push instants in {time.perf_counter() - t0:.1f} s", flush=True)
    # PushService.batch at SEND_RATE 30 and 1000 (TICK_SECONDS 30, PUSH_LEASE_SECONDS 120)
    batches = [int(min(30 * 30 * 1.5, 30 * 120 * 0.5)), int(min(1000 * 30 * 1.5, 1000 * 120 * 0.5))]
    instants = sorted(r[6] for r in rows)
    # "now" for each batch size: the moment when enough chats are due for that many full batches
    # (successive plans of the small batch, then one of the big one, later)
    small_end = min(len(instants), batches[0] * args.plans)
    big_end = min(len(instants), small_end + batches[1])
    nows = {
        batches[0]: instants[small_end - 1] + timedelta(seconds=1),
        batches[1]: instants[big_end - 1] + timedelta(seconds=1),
    }
    out_rows = []
    backends = ["sqlite"] + (["postgresql"] if args.postgres else [])
    pg = None
    try:
        for backend in backends:
            if backend == "sqlite":
                url = f"sqlite:///{work / 'push.db'}"
            else:
                from tests.pg import PostgresServer

                pg = PostgresServer().start()
                url = pg.create_db("bench_push")

            async def migrate(url: str = url) -> None:
                db = Database(url)
                await db.migrate()
                await db.close()

            asyncio.run(migrate())
            t0 = time.perf_counter()
            if backend == "sqlite":
                seed_sqlite(work / "push.db", rows, args.history_days, base)
            else:
                asyncio.run(seed_postgres(url, rows, args.history_days, base))
            print(
                f"{backend}: seeded {len(rows):,} chats + {len(rows) * args.history_days:,} deliveries in "
                f"{time.perf_counter() - t0:.1f} s",
                flush=True,
            )
            res = asyncio.run(time_planning(url, nows, batches, args.plans))
            out_rows.append(
                [backend, f"SELECT count(*) of due chats ({res['due_count']:,})", fmt(res["count_s"] * 1000, 1), "", ""]
            )
            for batch in batches:
                q, n = res[f"query_{batch}"]
                out_rows.append(
                    [
                        backend,
                        f"due-chat query, LIMIT {batch:,} ({n:,} rows)",
                        fmt(q * 1000, 1),
                        "< 1 s",
                        "met" if q < 1 else "NOT met",
                    ]
                )
            for batch in batches:
                if isinstance(res[f"plan_{batch}"], str):
                    out_rows.append(
                        [
                            backend,
                            f"PushPlanner.plan, batch {batch:,}: {res[f'plan_{batch}']}",
                            "—",
                            "< 1 s",
                            "NOT met (error)",
                        ]
                    )
                    continue
                p, handled, (claimed, skipped) = res[f"plan_{batch}"]
                per = f"{p / max(1, handled) * 1e6:,.0f} µs/chat"
                out_rows.append(
                    [
                        backend,
                        f"PushPlanner.plan, batch {batch:,} ({claimed:,} claimed + {skipped:,} too late; {per})",
                        fmt(p * 1000, 0),
                        "< 1 s",
                        "met" if p < 1 else "NOT met",
                    ]
                )
            out_rows.append(
                [
                    backend,
                    f"PushPlanner.due_reveals ({res['reveals_n']} due, {len(rows) * args.history_days:,} deliveries)",
                    fmt(res["reveals_s"] * 1000, 1),
                    "",
                    "",
                ]
            )
    finally:
        if pg is not None:
            pg.stop()
    return out_rows


def sender_run(work: Path, rate: int, n: int) -> dict[str, float]:
    from tests.daily_helpers import migrate, seed_due_chats

    fake = BenchFake().start()
    wd = work / f"sender-{rate}-{time.monotonic_ns()}"
    wd.mkdir()
    url = f"sqlite:///{wd / 'bot.db'}"
    try:
        migrate(url, wd)
        ids = list(range(60_000_000, 60_000_000 + n))
        for cid in ids:
            fake.private_chat(cid)
        seed_due_chats(url, ids)
        env = {"SEND_RATE": str(rate), "DATABASE_URL": url}
        if rate > 30:
            env["PAID_BROADCAST"] = "true"
        proc = our_bot(fake, wd, env, name=f"sender{rate}")
        proc.start(wait=False)
        sampler = CpuSampler(proc.pid).start()
        fake.wait_for(
            lambda: len(fake.send_times) >= n or proc.proc.poll() is not None,  # type: ignore[union-attr]
            timeout=max(120, n / rate * 5),
            what=f"{n} pushes",
        )
        sampler.stop()
        proc.stop()
        times = sorted(fake.send_times[:n])
        first, last = times[0], times[-1]
        cpu = sampler.at(last) - sampler.at(first)
        return {
            "rate": (len(times) - 1) / (last - first),
            "cpu_ms": cpu * 1000 / (len(times) - 1),
            "sent": len(times),
            "elapsed": last - first,
        }
    finally:
        fake.stop()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--part", choices=("all", "plan", "sender"), default="all")
    p.add_argument("--chats", type=int, default=100_000)
    p.add_argument("--history-days", type=int, default=3, help="days of sent deliveries already in the table")
    p.add_argument("--plans", type=int, default=3, help="successive plan() calls per batch size (the big one: 1)")
    p.add_argument("--no-postgres", dest="postgres", action="store_false")
    p.add_argument("--repeats", type=int, default=3, help="sender runs per rate")
    p.add_argument("--n30", type=int, default=150, help="pushes at SEND_RATE=30")
    p.add_argument("--n1000", type=int, default=1000, help="pushes at SEND_RATE=1000")


def run(args: argparse.Namespace) -> int:
    work = tempdir("push")
    summary_parts = []
    try:
        if args.part in ("all", "plan"):
            banner(f"planning: {args.chats:,} subscribed chats over all zones, {args.history_days} days of history")
            rows = plan_part(args, work)
            banner("planning, ms (the plan rows: median of successive batches)")
            print(table(["backend", "operation", "ms", "target", ""], rows))
            plan_rows = [r for r in rows if r[1].startswith("PushPlanner.plan, batch 1,350")]
            summary_parts.append("plan(1,350) " + ", ".join(f"{r[0]} {r[2]} ms" for r in plan_rows))
            big = [r for r in rows if r[1].startswith("PushPlanner.plan, batch 45,000")]
            summary_parts.append("plan(45,000) " + ", ".join(f"{r[0]} {r[2]} ms" for r in big))
        if args.part in ("all", "sender"):
            banner(f"sender: our bot process against the fake, {args.repeats} runs per rate")
            results: dict[int, list[dict[str, float]]] = {}
            for r in range(args.repeats):
                for rate, n in ((30, args.n30), (1000, args.n1000)):
                    res = sender_run(work, rate, n)
                    results.setdefault(rate, []).append(res)
                    print(
                        f"  run {r + 1}: SEND_RATE={rate}: {res['sent']} pushes, {res['rate']:.1f}/s, "
                        f"{res['cpu_ms']:.2f} ms CPU/message",
                        flush=True,
                    )
            rows = []
            for rate, rs in results.items():
                achieved = median(x["rate"] for x in rs)
                cpu = median(x["cpu_ms"] for x in rs)
                rows.append(
                    [
                        rate,
                        rs[0]["sent"],
                        fmt(achieved, 1),
                        f"{achieved / rate * 100:.0f} %",
                        fmt(cpu),
                        fmt(1000 / cpu, 0),
                    ]
                )
                summary_parts.append(
                    f"sender at {rate}/s: {achieved:.0f}/s ({achieved / rate * 100:.0f} %), {cpu:.1f} ms CPU/message"
                )
            print(
                table(
                    ["SEND_RATE", "pushes", "achieved /s", "of configured", "CPU ms/message", "CPU-bound ceiling /s"],
                    rows,
                )
            )
        print(f"\nSUMMARY push: {'; '.join(summary_parts)}")
    finally:
        rmtree(work)
    return 0
