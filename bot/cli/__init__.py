"""The ``interview-bot`` command (``python -m bot``): one module per command group.

- :mod:`bot.cli.operations`: run, demo, validate, migrate, health;
- :mod:`bot.cli.grading`: disputes, grade, grade-eval;
- :mod:`bot.cli.interop`: import, export;
- :mod:`bot.cli.practice`: practice in a terminal.

Each group declares its sub-commands (``add_commands``) and imports at its top only what the
parser needs: what a command needs is imported when it runs, so ``run`` loads no import, export,
grading-report, terminal or demo code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bot import __version__
from bot.cli import evidence, grading, interop, operations, practice
from bot.cli.common import EXIT_BAD_SETTINGS
from bot.config import SettingsError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="interview-bot",
        description="A Telegram bot that trains ML/LLM engineers for technical interviews.",
    )
    parser.add_argument("--version", action="version", version=f"interview-bot {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in (operations, grading, evidence, interop, practice):
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except SettingsError as exc:
        print(f"interview-bot: {exc}", file=sys.stderr)
        return EXIT_BAD_SETTINGS
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `interview-bot validate | head`
        sys.stderr.close()
        return 0
    return result
