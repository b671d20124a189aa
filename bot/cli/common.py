"""What the command groups share: exit codes, the one-line failure, the bank a command works on."""

from __future__ import annotations

import sys
from pathlib import Path

from bot.bank import Bank, BankError, Topic, default_bank_path, load_bank
from bot.bank.loader import cache_is_warm, warm_cache
from bot.config import Settings, SettingsError, default_cache_dir, load_settings

EXIT_FAILED = 1
EXIT_INVALID_BANK = 1
EXIT_USAGE = 2
EXIT_BAD_SETTINGS = 2


def fail(message: str, code: int) -> int:
    """Print ``interview-bot: <message>`` on stderr; the exit code to return."""
    print(f"interview-bot: {message}", file=sys.stderr)
    return code


def configured_bank_path() -> Path:
    """BANK_PATH, else the bundled bank (as `validate` and `run` use)."""
    try:
        settings = load_settings()
    except SettingsError:
        return default_bank_path()
    return settings.bank_path or default_bank_path()


def load_bank_reported(path: Path) -> Bank | None:
    """The bank at ``path``, or None once its problems are printed on stderr."""
    try:
        return load_bank(path)
    except BankError as exc:
        print(exc.report(), file=sys.stderr)
        return None


def load_bank_or_exit(settings: Settings) -> Bank:
    """The bank as ``run`` loads it (through the cache when it is on); exit 1 on an invalid one."""
    path = settings.bank_path or default_bank_path()
    cache = default_cache_dir() if settings.bank_cache else None
    try:
        if cache is not None and not cache_is_warm(path, cache):
            # Parse the YAML in a short-lived child: the parser's garbage dies with it.
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
                pool.submit(warm_cache, path, cache).result()
        return load_bank(path, cache_dir=cache)
    except BankError as exc:
        print(exc.report(), file=sys.stderr)
        print("interview-bot: refusing to start with an invalid bank.", file=sys.stderr)
        raise SystemExit(EXIT_INVALID_BANK) from None


def find_topic(bank: Bank, query: str) -> Topic | None:
    """A topic by id or title (exact, else the only one whose id or title starts with the query)."""
    q = " ".join(query.casefold().split())
    for t in bank.topics:
        if q in (t.id, t.title_ru.casefold(), t.title_en.casefold()):
            return t
    starts = [
        t
        for t in bank.topics
        if t.id.startswith(q) or t.title_ru.casefold().startswith(q) or t.title_en.casefold().startswith(q)
    ]
    return starts[0] if len(starts) == 1 else None
