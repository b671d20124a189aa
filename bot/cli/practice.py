"""``interview-bot practice``: the practice loop in a terminal (:mod:`bot.terminal`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bot.bank import default_bank_path
from bot.cli.common import EXIT_FAILED, EXIT_USAGE, fail, find_topic, load_bank_reported
from bot.config import load_settings


def cmd_practice(args: argparse.Namespace) -> int:
    from bot.terminal import PracticeOptions, run_practice

    settings = load_settings()
    bank = load_bank_reported(Path(args.bank) if args.bank else settings.bank_path or default_bank_path())
    if bank is None:
        return EXIT_FAILED
    args.lang = args.lang or settings.default_language  # the bot's default language, Russian unless set
    topic = None
    if args.topic:
        topic = find_topic(bank, args.topic)
        if topic is None:
            known = "\n".join(f"  {t.id:<14} {t.title(args.lang)}" for t in bank.topics)
            return fail(f"no topic '{args.topic}'; the topics are:\n{known}", EXIT_USAGE)
    if args.n < 1:
        return fail("--n must be at least 1", EXIT_USAGE)
    from bot.services.graders import build_grader

    grader = build_grader(settings, bank.lexicon)
    options = PracticeOptions(topic=topic, n=args.n, include_tasks=args.tasks, lang=args.lang)
    run_practice(bank, settings.database_url, options, grader=grader)
    return 0


def add_commands(sub: Any) -> None:
    """Register practice on the main parser."""
    practice = sub.add_parser(
        "practice",
        help="practise in the terminal: questions, your answer, key-point feedback, the reference answer",
    )
    practice.add_argument("--topic", help="a topic id or title")
    practice.add_argument("--n", type=int, default=5, help="how many questions (default: %(default)s)")
    practice.add_argument("--tasks", action="store_true", help="include practice tasks")
    practice.add_argument(
        "--lang",
        choices=("en", "ru"),
        default=None,
        help="the language of the session's texts (default: DEFAULT_LANGUAGE, as the bot)",
    )
    practice.add_argument("--bank", help="bank folder or file (default: BANK_PATH or the bundled bank)")
    practice.set_defaults(func=cmd_practice)
