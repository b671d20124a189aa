"""Update handling end to end: the same fake Bot API server drives updates through (a) a bare PTB
echo bot and (b) our bot doing real work (/q, an answer stored and graded, the «Показать ответ»
reveal), sequentially (one user) and with many concurrent users. Reports throughput, p50/p99
latency (update available at the fake → the bot's reply recorded there) and the ratio b/a.

Latency ends at the bot's first sendMessage for a message update, and for the reveal when both the
answer message and answerCallbackQuery have arrived (our bot answers such a press at once, alongside
sending the answer; before 2026-12-04 it answered it after sending). Each user waits for
the reply before sending the next update, like a person does.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from typing import Any

from bench.common import (
    BenchFake,
    Proc,
    banner,
    callback_update,
    echo_bot,
    fmt,
    median,
    message_update,
    our_bot,
    rmtree,
    summary,
    table,
    tempdir,
)

ANSWER = (
    "Я бы сохранял чекпоинты регулярно: веса модели, состояние оптимизатора и номер шага, чтобы после "
    "сбоя продолжить обучение с последней контрольной точки, а не с нуля. Gradient checkpointing "
    "экономит память активаций: часть активаций пересчитывается на backward pass ценой примерно ещё "
    "одного прямого прохода. Сохранять лучше асинхронно и проверять целостность файла."
)
REVEAL_LABEL = "Показать ответ"
_uids = itertools.count(700_000)


class Timeout(Exception):
    pass


async def _next_call(
    q: asyncio.Queue[tuple[float, str, Any]], methods: tuple[str, ...], wait_s: float
) -> tuple[float, str, Any]:
    """The next call of one of ``methods`` the bot made in this chat: (when, method, what)."""
    deadline = time.monotonic() + wait_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise Timeout
        try:
            at, method, payload = await asyncio.wait_for(q.get(), left)
        except TimeoutError:
            raise Timeout from None
        if method in methods:
            return at, method, payload


async def _next(q: asyncio.Queue[tuple[float, str, Any]], methods: tuple[str, ...], wait_s: float) -> tuple[float, Any]:
    at, _, payload = await _next_call(q, methods, wait_s)
    return at, payload


async def _ours_user(fake: BenchFake, uid: int, cycles: int, out: list[tuple[str, float]], *, warm: bool) -> int:
    q = fake._queue(uid)
    fake.private_chat(uid)
    errors = 0
    try:
        if warm:  # the first update of a user upserts its rows (once per 10 min): not measured
            await fake.push(message_update(fake, uid, "/help"))
            await _next(q, ("sendMessage",), 30)
        for _ in range(cycles):
            t0 = await fake.push(message_update(fake, uid, "/q"))
            at, question = await _next(q, ("sendMessage",), 30)
            out.append(("/q", at - t0))
            data = question.button(REVEAL_LABEL)
            t0 = await fake.push(message_update(fake, uid, ANSWER))
            at, feedback = await _next(q, ("sendMessage",), 30)
            out.append(("answer", at - t0))
            if "Знал" not in str(feedback.reply_markup) and "Знал" not in feedback.text:
                errors += 1  # not the feedback we expected
            t0 = await fake.push(callback_update(fake, uid, question, data))
            seen: dict[str, float] = {}  # the answer and the press's answer, in either order
            while len(seen) < 2:
                at, method, _ = await _next_call(q, ("sendMessage", "answerCallbackQuery"), 30)
                seen.setdefault(method, at)
            out.append(("reveal", max(seen.values()) - t0))
            out.append(("reveal (1st msg)", seen["sendMessage"] - t0))
    except (Timeout, AssertionError):
        errors += 1
    return errors


async def _echo_user(fake: BenchFake, uid: int, count: int, out: list[tuple[str, float]], *, warm: bool) -> int:
    q = fake._queue(uid)
    fake.private_chat(uid)
    try:
        if warm:
            await fake.push(message_update(fake, uid, "warm-up"))
            await _next(q, ("sendMessage",), 30)
        for i in range(count):
            t0 = await fake.push(message_update(fake, uid, f"{ANSWER[:60]} {i}"))
            at, _ = await _next(q, ("sendMessage",), 30)
            out.append(("echo", at - t0))
    except Timeout:
        return 1
    return 0


async def _scenario(fake: BenchFake, kind: str, users: int, per_user: int) -> dict[str, Any]:
    """per_user: cycles (ours, 3 updates each) or messages (echo)."""
    uids = [next(_uids) for _ in range(users)]
    out: list[tuple[str, float]] = []
    if kind == "ours":  # warm-up (upserts, statement caches) outside the measurement
        await asyncio.gather(*(_ours_user(fake, u, 0, [], warm=True) for u in uids))
        await _ours_user(fake, next(_uids), 1, [], warm=True)
    else:
        await asyncio.gather(*(_echo_user(fake, u, 0, [], warm=True) for u in uids))
    started = time.monotonic()
    if kind == "ours":
        errors = await asyncio.gather(*(_ours_user(fake, u, per_user, out, warm=False) for u in uids))
    else:
        errors = await asyncio.gather(*(_echo_user(fake, u, per_user, out, warm=False) for u in uids))
    elapsed = time.monotonic() - started
    latencies = [v for k, v in out if k != "reveal (1st msg)"]
    return {
        "updates": len(latencies),
        "elapsed": elapsed,
        "errors": sum(errors),
        "latencies": latencies,
        "by_kind": out,
    }


def _measure(fake: BenchFake, proc: Proc, kind: str, users: int, per_user: int) -> dict[str, Any]:
    cpu0 = proc.cpu()
    result = fake.run(_scenario(fake, kind, users, per_user), timeout=900)
    result["cpu"] = proc.cpu() - cpu0
    s = summary(result["latencies"])
    result.update(
        throughput=result["updates"] / result["elapsed"],
        p50=s["p50"] * 1000,
        p99=s["p99"] * 1000,
        cpu_ms=result["cpu"] * 1000 / max(1, result["updates"]),
    )
    return result


def _profile_bot(work: Any, cycles: int) -> None:
    import pstats
    import signal
    import sys

    from bench.inprocess import report_cprofile

    fake = BenchFake().start()
    wd = work / "profiled"
    wd.mkdir()
    out = wd / "bot.prof"
    proc = our_bot(fake, wd, name="profiled")
    proc.argv = [sys.executable, "-m", "bench.profiled_bot", str(out)]
    proc.start().wait_for_log("grader ready")
    try:
        _measure(fake, proc, "ours", 1, 3)  # warm
        proc.proc.send_signal(signal.SIGUSR1)  # type: ignore[union-attr]
        res = _measure(fake, proc, "ours", 1, cycles)
        proc.proc.send_signal(signal.SIGUSR1)  # type: ignore[union-attr]
        fake.wait_for(out.exists, 10, "the profile")
        time.sleep(0.5)
        banner(
            f"our bot process profiled over {res['updates']} updates ({res['cpu_ms']:.1f} ms CPU/update unprofiled "
            "figures above; the profiler adds overhead)"
        )
        report_cprofile(pstats.Stats(str(out)), res["updates"], 25)
    finally:
        proc.stop()
        fake.stop()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seq-updates", type=int, default=150, help="updates in the sequential run (1 user)")
    p.add_argument("--users", type=int, default=50, help="concurrent users")
    p.add_argument("--cycles", type=int, default=2, help="/q+answer+reveal cycles per concurrent user")
    p.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite", help="our bot's database")
    p.add_argument("--echo-args", default="", help="extra echo_bot flags, e.g. '--rate-limiter'")
    p.add_argument(
        "--profile-bot",
        type=int,
        default=0,
        metavar="CYCLES",
        help="after the runs, profile our bot process (cProfile, steady state only) over this many "
        "sequential /q+answer+reveal cycles and print the top functions",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    work = tempdir("updates")
    pg = None
    env: dict[str, str] = {}
    if args.db == "postgres":
        from tests.pg import PostgresServer

        pg = PostgresServer().start()
    bots: list[tuple[str, str, BenchFake, Proc]] = []
    try:
        fake_a = BenchFake().start()
        (work / "a").mkdir()
        bots.append(("a: PTB echo", "echo", fake_a, echo_bot(fake_a, work / "a", *args.echo_args.split()).start()))
        variants = [("b: our bot", ["-m", "bot", "run"])]
        for n, (label, argv) in enumerate(variants):
            fake = BenchFake().start()
            wd = work / f"b{n}"
            wd.mkdir()
            if pg is not None:
                env["DATABASE_URL"] = pg.create_db(f"bench_updates_{n}")
            proc = our_bot(fake, wd, env, name=f"ours{n}")
            proc.argv = [sys.executable, *argv]
            # measured once the grader's warm-up after the start is over: the steady state
            bots.append((label, "ours", fake, proc.start().wait_for_log("grader ready")))
        seq_cycles = max(1, args.seq_updates // 3)
        modes = [
            ("sequential, 1 user", 1, seq_cycles * 3, seq_cycles),
            (f"{args.users} concurrent users", args.users, args.cycles * 3, args.cycles),
        ]
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        banner(
            f"updates: {', '.join(f'{label} (pid {p.pid})' for label, _, _, p in bots)}; db {args.db}; "
            f"{args.repeats} repeats"
        )
        for r in range(args.repeats):
            for mode, users, echo_n, cycles in modes:
                line = []
                for label, kind, fake, proc in bots:
                    res = _measure(fake, proc, kind, users, echo_n if kind == "echo" else cycles)
                    results.setdefault((mode, label), []).append(res)
                    line.append(
                        f"{label.split(':')[0]} {res['throughput']:.0f}/s p50 {res['p50']:.1f} ms "
                        f"p99 {res['p99']:.1f} ms err {res['errors']}"
                    )
                print(f"  run {r + 1} {mode}: " + " | ".join(line), flush=True)
        rows = []
        ratios: dict[str, dict[str, float]] = {}
        base_label = bots[0][0]
        for mode, *_ in modes:
            for label, kind, *_ in bots:
                ra = results[(mode, base_label)]
                rs = results[(mode, label)]
                ratio = median(b["throughput"] / a["throughput"] for a, b in zip(ra, rs, strict=True))
                if kind == "ours":
                    ratios.setdefault(label, {})[mode] = ratio
                rows.append(
                    [
                        mode,
                        label,
                        rs[0]["updates"],
                        fmt(median(x["throughput"] for x in rs), 1),
                        fmt(median(x["p50"] for x in rs)),
                        fmt(median(x["p99"] for x in rs)),
                        fmt(median(x["cpu_ms"] for x in rs)),
                        sum(x["errors"] for x in rs),
                        fmt(ratio) if kind == "ours" else "",
                    ]
                )
        banner("results (medians over repeats)")
        print(
            table(
                [
                    "mode",
                    "bot",
                    "updates/run",
                    "updates/s",
                    "p50 ms",
                    "p99 ms",
                    "bot CPU ms/update",
                    "errors",
                    "throughput ÷ echo",
                ],
                rows,
            )
        )
        kind_rows = []
        for mode, *_ in modes:
            for label, kind, *_ in bots:
                if kind != "ours":
                    continue
                per: dict[str, list[float]] = {}
                for res in results[(mode, label)]:
                    for k, v in res["by_kind"]:
                        per.setdefault(k, []).append(v * 1000)
                for k, vs in per.items():
                    s = summary(vs)
                    kind_rows.append([mode, label, k, s["n"], fmt(s["p50"]), fmt(s["p99"])])
        banner("our bot by update kind (all repeats pooled)")
        print(table(["mode", "bot", "kind", "n", "p50 ms", "p99 ms"], kind_rows))
        if args.profile_bot:
            _profile_bot(work, args.profile_bot)
        ours = ratios["b: our bot"]
        worst = min(ours.values())
        print(
            f"\nSUMMARY updates: b/a throughput {', '.join(f'{m}: {v:.2f}' for m, v in ours.items())}"
            f"; target >= 0.7 {'met' if worst >= 0.7 else 'NOT met'}"
        )
    finally:
        for _, _, fake, proc in bots:
            proc.stop()
            fake.stop()
        if pg is not None:
            pg.stop()
        rmtree(work)
    return 0
