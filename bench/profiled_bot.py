"""``python -m bench.profiled_bot OUT.prof``: ``interview-bot run`` whose main thread
is profiled (cProfile) between two SIGUSR1 signals, so a benchmark can profile the steady state
only (``python -m bench updates --profile-bot``). Bench only."""

from __future__ import annotations

import cProfile
import signal
import sys

from bot.cli import main

if __name__ == "__main__":
    out = sys.argv[1]
    profiler = cProfile.Profile()
    state = {"on": False}

    def toggle(signum: int, frame: object) -> None:
        if not state["on"]:
            profiler.enable()
        else:
            profiler.disable()
            profiler.dump_stats(out)
        state["on"] = not state["on"]

    signal.signal(signal.SIGUSR1, toggle)
    sys.exit(main(["run"]))
