"""Start-up: from process start to the first update handled. A /start is waiting at the fake Bot API
server before the process starts; the clock runs from just before ``Popen`` until the reply is
recorded at the fake. Also reported: when the process first reaches the Bot API (getMe: imports,
settings, bank loaded, indexes built) and when it starts polling (migrations, setMyCommands).

Variants, each the median of N starts (interleaved): our bot on a new SQLite database (migrations
run), our bot restarted on an existing database, and the bare PTB echo bot as the baseline. Then
what happens before the first API call, measured in fresh interpreters: importing the bot
(``import bot.tg.app``), loading the shipped bank and building its indexes.
"""

from __future__ import annotations

import argparse
import time

from bench.common import BenchFake, Proc, banner, echo_bot, fmt, median, message_update, our_bot, rmtree, table, tempdir


def _one(fake: BenchFake, proc: Proc, uid: int) -> dict[str, float]:
    fake.push_update(message_update(fake, uid, "/start"))
    calls_before = len(fake.calls)
    t0 = time.monotonic()
    proc.start(wait=False)
    deadline = t0 + 120
    reply = None
    while time.monotonic() < deadline:
        if fake.messages(uid):
            reply = time.monotonic()
            break
        if proc.proc is not None and proc.proc.poll() is not None:
            raise RuntimeError(f"{proc.name} exited:\n{proc.log()[-2000:]}")
        time.sleep(0.005)
    if reply is None:
        raise RuntimeError("no reply to /start within 120 s")
    calls = fake.calls[calls_before:]
    get_me = next((at for m, _, at in calls if m == "getMe"), float("nan"))
    polling = next((at for m, _, at in calls if m == "getUpdates"), float("nan"))
    proc.stop()
    return {"getMe": get_me - t0, "polling": polling - t0, "reply": reply - t0}


_PARTS = r"""
import time, json
t0 = time.perf_counter()
import telegram.ext
t1 = time.perf_counter()
import bot.tg.app, bot.cli
t2 = time.perf_counter()
from bot.bank import default_bank_path, load_bank
from bot.catalog import Catalog
bank = load_bank(default_bank_path())
t3 = time.perf_counter()
Catalog.build(bank)
t4 = time.perf_counter()
print(json.dumps({"import telegram.ext (PTB, httpx)": t1 - t0,
                  "import the bot (SQLAlchemy, alembic, pydantic, ...)": t2 - t1,
                  "load_bank (shipped bank)": t3 - t2,
                  "Catalog.build (search + glossary indexes)": t4 - t3}))
"""


def _before_first_call(repeats: int) -> dict[str, float]:
    import json
    import subprocess
    import sys

    from bench.common import ROOT

    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", _PARTS], capture_output=True, text=True, check=True, cwd=ROOT)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {k: median(r[k] for r in runs) for k in runs[0]}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repeats", type=int, default=5)


def run(args: argparse.Namespace) -> int:
    work = tempdir("startup")
    fake = BenchFake().start()
    uid = 900_000
    variants = ["our bot, new database", "our bot, existing database", "PTB echo bot (baseline)"]
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    try:
        existing = work / "existing"
        existing.mkdir()
        our_bot(fake, existing).start().stop()  # the existing database (not measured)
        banner(f"startup: {args.repeats} starts per variant, interleaved")
        for r in range(args.repeats):
            for v in variants:
                uid += 1
                if v == "our bot, new database":
                    wd = work / f"new{r}"
                    wd.mkdir()
                    proc = our_bot(fake, wd, name="new")
                elif v == "our bot, existing database":
                    proc = our_bot(fake, existing, name="existing")
                else:
                    proc = echo_bot(fake, work)
                results[v].append(_one(fake, proc, uid))
            print(f"  run {r + 1}: " + ", ".join(f"{v}: {results[v][-1]['reply']:.2f} s" for v in variants), flush=True)
        rows = []
        for v in variants:
            rs = results[v]
            rows.append(
                [
                    v,
                    fmt(median(x["getMe"] for x in rs)),
                    fmt(median(x["polling"] for x in rs)),
                    fmt(median(x["reply"] for x in rs)),
                    fmt(min(x["reply"] for x in rs)),
                    fmt(max(x["reply"] for x in rs)),
                ]
            )
        banner(f"seconds from process start (medians of {args.repeats})")
        print(table(["variant", "first getMe", "first getUpdates", "/start answered", "min", "max"], rows))
        parts = _before_first_call(args.repeats)
        banner("before the first API call (fresh interpreters, medians)")
        print(table(["step", "seconds"], [[k, fmt(v)] for k, v in parts.items()]))
        ours = median(x["reply"] for x in results["our bot, existing database"])
        new = median(x["reply"] for x in results["our bot, new database"])
        echo = median(x["reply"] for x in results["PTB echo bot (baseline)"])
        print(
            f"\nSUMMARY startup: first update answered {ours:.2f} s after process start (new database {new:.2f} s); "
            f"PTB echo {echo:.2f} s ({ours / echo:.1f}×, target ≤ 3× {'met' if ours / echo <= 3 else 'NOT met'})"
        )
    finally:
        fake.stop()
        rmtree(work)
    return 0
