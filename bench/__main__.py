"""``python -m bench <name> [options]``: run one benchmark by hand (never part of pytest).

Each benchmark prints its figures and ends with a one-line ``SUMMARY``. See bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib
import sys

BENCHMARKS = {
    "updates": "update handling through the fake Bot API: our bot vs a bare PTB echo bot",
    "inprocess": "µs per update without HTTP (recording request), and a profile",
    "picking": "/q <topic>, /search, glossary lookup on 100k questions / 100k users",
    "push": "push planning with 100k chats (SQLite, PostgreSQL) and the sender's rate and CPU",
    "memory": "RSS of the running bot: shipped bank, 100k users, 10k-question bank",
    "startup": "process start → first update answered",
    "bankload": "load_bank on a 10,000-question YAML bank: parse vs validation",
    "webapp": "the Mini App's API with 10,000 answers for one user: p50/p95 per endpoint",
    "csvimport": "interview-bot import of a 1/2/4 MB questions CSV: wall time and peak RSS",
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in BENCHMARKS:
        print(__doc__.strip(), "\n\nbenchmarks:", file=sys.stderr)
        for name, help_text in BENCHMARKS.items():
            print(f"  {name:<10} {help_text}", file=sys.stderr)
        print("\n`python -m bench NAME --help` lists a benchmark's options.", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    name = argv[0]
    module = importlib.import_module(f"bench.{name}")  # only the chosen one (imports stay cheap)
    parser = argparse.ArgumentParser(
        prog=f"python -m bench {name}", description=module.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(argv[1:])) or 0)


if __name__ == "__main__":
    sys.exit(main())
