"""``python -m bench.proto_bot``: ``interview-bot run`` with the prototyped fixes of
bench/proposals.py patched in (for ``python -m bench updates --with-proposals``). Bench only."""

from __future__ import annotations

import sys

from bench import proposals
from bot.cli import main

if __name__ == "__main__":
    with proposals.applied():
        sys.exit(main(["run"]))
