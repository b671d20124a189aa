"""Load and validate a bank from YAML files; every problem is reported as ``file:line: message``.

The loader reads every ``*.yaml``/``*.yml`` file under the bank folder with PyYAML's C loader (when
available), keeping the line of every mapping and key (:mod:`bot.bank.yaml_lines`), checks each
record (:mod:`bot.bank.records`) and then the links between them (:mod:`bot.bank.linking`), and
either returns an immutable :class:`~bot.bank.model.Bank` or raises :class:`BankError` listing all
problems at once. An unchanged bank is rebuilt from a cache of its validated records.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterable
from pathlib import Path

import yaml

from bot.bank.linking import BankChecker
from bot.bank.model import Area, Bank, Lexicon, Question, Term, Topic
from bot.bank.problems import BankError, Problem
from bot.bank.rules import TOP_LEVEL
from bot.bank.yaml_lines import CHUNKED_CHARS, LineMap, LineSeq, parse_in_chunks, parse_yaml

__all__ = ["BankError", "Problem", "bank_files", "cache_is_warm", "default_bank_path", "load_bank", "warm_cache"]


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def bank_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml"} and p.is_file())


def _walk_file(checker: BankChecker, path: Path) -> None:
    file = _display(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        checker.problem(file, 1, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        return
    except OSError as exc:
        checker.problem(file, 0, f"cannot read: {exc.strerror}")
        return
    duplicates: list[tuple[int, str]] = []
    try:
        data = parse_in_chunks(text, duplicates) if len(text) > CHUNKED_CHARS else None
        if data is None:
            duplicates.clear()
            data = parse_yaml(text, 0, duplicates)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = exc.problem or exc.context or "invalid YAML"
        checker.problem(file, line, f"bad YAML at column {col}: {reason}")
        return
    except yaml.YAMLError as exc:
        checker.problem(file, 1, f"bad YAML: {exc}")
        return
    for line, message in duplicates:
        checker.problem(file, line, message)
    if data is None:
        return
    if not isinstance(data, LineMap):
        checker.problem(file, 1, "expected a mapping with 'topics:', 'questions:' or 'glossary:'")
        return
    handlers = {"areas": checker.area, "topics": checker.topic, "questions": checker.question, "glossary": checker.term}
    for key, value in data.items():
        line = data.key_lines.get(key, 1)
        if key not in TOP_LEVEL:
            checker.problem(
                file, line, f"unknown section {key!r} (expected areas, topics, questions, glossary, synonyms, antonyms)"
            )
            continue
        if value is None:
            continue
        if not isinstance(value, list):
            checker.problem(file, line, f"{key!r} must be a list of entries ('- id: ...')")
            continue
        if key in ("synonyms", "antonyms"):
            for i, item in enumerate(value):
                checker.synonym_group(file, value.item_lines[i] if isinstance(value, LineSeq) else line, item, key)
            continue
        for item in value:
            if not isinstance(item, LineMap):
                checker.problem(file, line, f"every entry under {key!r} must be a mapping")
                continue
            handlers[key](file, item)


def load_bank(path: Path | str, files: Iterable[Path] | None = None, *, cache_dir: Path | None = None) -> Bank:
    """Load and validate the bank at ``path`` (a folder or one file); raise :class:`BankError`.

    With ``cache_dir``, a bank whose files are unchanged since the last successful load (same
    paths, sizes and modification times, same loader version) is rebuilt from a cache of its
    validated records instead of parsing the YAML again; any change means a full load.
    """
    root = Path(path)
    if not root.exists():
        raise BankError([Problem(_display(root), 0, "no such file or folder")])
    paths = list(files) if files is not None else bank_files(root)
    if not paths:
        raise BankError([Problem(_display(root), 0, "no .yaml files in the bank folder")])
    cache_file = _cache_file(cache_dir, root, paths) if cache_dir is not None else None
    if cache_file is not None:
        cached = _read_cache(cache_file)
        if cached is not None:
            topics, questions, terms, lexicon, areas = cached
            return Bank(topics, questions, terms, source=str(root), lexicon=lexicon, areas=areas)
    checker = BankChecker()
    for p in paths:
        _walk_file(checker, p)
    bank = checker.link()
    if bank is None:
        raise BankError(checker.problems)
    bank.source = str(root)
    if cache_file is not None:
        _write_cache(cache_file, bank)
    return bank


CACHE_VERSION = 5


def cache_is_warm(path: Path | str, cache_dir: Path) -> bool:
    """Whether :func:`load_bank` would be a cache hit for the bank at ``path``."""
    root = Path(path)
    paths = bank_files(root) if root.exists() else []
    return bool(paths) and _cache_file(cache_dir, root, paths).exists()


def warm_cache(path: Path | str, cache_dir: Path) -> None:
    """Load and validate the bank only to fill the cache (run in a child process, so that the
    memory the YAML parser leaves behind never belongs to the long-running bot)."""
    load_bank(path, cache_dir=cache_dir)


def _cache_file(cache_dir: Path, root: Path, paths: list[Path]) -> Path:
    """A cache file name that changes whenever the bank's files (or this loader) change."""
    digest = hashlib.sha256(f"{CACHE_VERSION}:{root.resolve()}".encode())
    for module in sorted(Path(__file__).parent.glob("*.py")):  # a new loader or format invalidates the cache
        digest.update(module.read_bytes())
    for p in sorted(paths):
        st = p.stat()
        digest.update(f"\0{p.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return cache_dir / f"bank-{digest.hexdigest()[:32]}.pickle"


def _read_cache(cache_file: Path) -> tuple[list[Topic], list[Question], list[Term], Lexicon, list[Area]] | None:
    try:
        with cache_file.open("rb") as f:  # streamed: the file's bytes (21 MB for 10,000 questions) are never held whole
            data = pickle.load(f)  # noqa: S301 - our own file in the user's cache dir
    except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError, TypeError):
        return None
    if not (isinstance(data, tuple) and len(data) == 5):
        return None
    return data


def _write_cache(cache_file: Path, bank: Bank) -> None:
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        for old in cache_file.parent.glob("bank-*.pickle"):
            old.unlink(missing_ok=True)
        records = (
            list(bank.topics), list(bank.questions.values()), list(bank.terms.values()), bank.lexicon, list(bank.areas)
        )  # fmt: skip
        tmp = cache_file.with_suffix(f".{os.getpid()}.tmp")  # processes warming at once do not mix
        with tmp.open("wb") as f:
            pickle.dump(records, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(cache_file)
    except OSError:
        pass  # a read-only home: load from YAML every time


def default_bank_path() -> Path:
    """The bundled bank: ``data/`` in a source checkout, ``bot/bank_data`` in an installed wheel."""
    import importlib.util

    spec = importlib.util.find_spec("bot.bank_data")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if Path(location).is_dir():
                return Path(location)
    return Path(__file__).resolve().parents[2] / "data"
