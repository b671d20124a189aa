"""Sub-commands of ``interview-bot`` for import, export and terminal practice."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the interop sub-commands on the main parser."""
    return None
