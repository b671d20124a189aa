"""``interview-bot import`` of a questions CSV of 1, 2 and 4 MB (issue 29: it was quadratic — 4.7 /
16.6 / 40.7 s and 646 MB at 4 MB; the target is a 4 MB file in under 5 s and 250 MB). Each size runs
as its own process (`/usr/bin/time` semantics: wall seconds and peak RSS from the OS, via
``resource.getrusage(RUSAGE_CHILDREN)`` after the child exits). The CSV is synthetic: one topic,
rows of a question, a 40-word answer and two key points.
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

from bench.common import banner, rmtree, table, tempdir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default="1,2,4", help="CSV sizes in MB (default 1,2,4)")


def write_csv(path: Path, megabytes: float, seed: int = 1) -> int:
    rng = random.Random(seed)
    words = ["активации", "градиенты", "веса", "LoRA", "батч", "токены", "память", "attention"]
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["question", "answer", "key points", "terms", "topic"])
        while f.tell() < megabytes * 1_000_000:
            answer = "Ответ: " + " ".join(rng.choice(words) for _ in range(40))
            w.writerow([f"Вопрос {rows} про обучение {rng.randint(0, 10**9)}?", answer,
                        f"Первый пункт {rows}\nВторой пункт", "lora", "training"])  # fmt: skip
            rows += 1
    return rows


def run(args: argparse.Namespace) -> int:
    banner("csvimport: interview-bot import of a questions CSV")
    folder = tempdir("csvimport")
    results = []
    try:
        for size in (float(s) for s in args.sizes.split(",")):
            src, out = folder / f"q{size:g}.csv", folder / f"q{size:g}.yaml"
            rows = write_csv(src, size)
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "bot", "import", str(src), "--out", str(out), "--bank", "none"],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            seconds = time.perf_counter() - started
            peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
            ok = done.returncode == 0
            results.append((f"{size:g} MB", str(rows), f"{seconds:.2f} s", f"{peak:.0f} MB", "ok" if ok else "FAILED"))
    finally:
        rmtree(folder)
    print(table(["CSV", "rows", "wall", "peak RSS", "result"], results))
    last = results[-1]
    print(f"SUMMARY csvimport: {last[0]} in {last[2]}, peak RSS {last[3]}")
    return 0
