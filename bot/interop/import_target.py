"""Where an import goes: an addition to a bank folder or a stand-alone bank, what it merges with
(the bank, the existing ``--out`` file), and writing the result only once it validates."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from bot.bank import Bank, BankError, load_bank
from bot.bank.loader import bank_files


class ImportFailed(Exception):
    """The import cannot go on; the message says why (printed as one line, exit code 1)."""


@dataclass(slots=True)
class Target:
    """Where the import goes and what it merges with."""

    out: Path
    addition: bool  # an addition to a bank folder (else a stand-alone bank)
    base: Bank | None  # the bank merged with (addition: the rest of the folder; else the reference)
    base_root: Path | None
    base_files: list[Path]
    previous: Bank | None  # the existing --out file's content, if merging into it
    previous_links: dict[str, list[str]]  # its glossary's explicit links
    previous_topics: list[str]

    def describe(self) -> str:
        if self.addition:
            return f"addition to the bank {self.base_root} (validated together with it)"
        if self.base is not None:
            return f"stand-alone bank (merged with the bank {self.base_root})"
        return "stand-alone bank (no bank to merge with)"


def _is_inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return folder.is_dir()


def _same_file(a: Path, b: Path) -> bool:
    return a.resolve() == b.resolve()


def _raw_yaml(path: Path) -> dict[str, object]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _ids(raw: dict[str, object], key: str) -> list[str]:
    entries = raw.get(key)
    if not isinstance(entries, list):
        return []
    return [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]


def _load(root: Path, files: list[Path], what: str) -> Bank:
    try:
        return load_bank(root, files=files)
    except BankError as exc:
        raise ImportFailed(f"{what} is not a valid bank:\n{exc.report()}") from None


def plan_target(out: Path, bank_path: Path | None, *, force: bool) -> Target:
    """Decide the output kind and load what the import merges with (see the module docstring)."""
    out_exists = out.exists()
    if out_exists and not force:
        raise ImportFailed(f"{out} already exists; add --force to merge into it and rewrite it")
    if bank_path is not None and bank_path.is_file() and _same_file(bank_path, out):
        bank_path = None  # merging into the output file itself
    addition = bank_path is not None and _is_inside(out, bank_path)
    base: Bank | None = None
    base_files: list[Path] = []
    previous: Bank | None = None
    if bank_path is not None:
        if not bank_path.exists():
            raise ImportFailed(f"--bank {bank_path}: no such file or folder")
        base_files = [p for p in bank_files(bank_path) if not _same_file(p, out)]
        base = _load(bank_path, base_files, f"the bank {bank_path}") if base_files else None
    raw: dict[str, object] = {}
    if out_exists:
        raw = _raw_yaml(out)
        files = [*base_files, out] if addition else [out]
        previous = _load(bank_path if addition and bank_path else out, files, f"the existing {out}")
    links: dict[str, list[str]] = {}
    entries = raw.get("glossary")
    if isinstance(entries, list):
        for e in entries:
            if isinstance(e, dict) and "id" in e and isinstance(e.get("questions"), list):
                links[str(e["id"])] = [str(q) for q in e["questions"]]
    return Target(
        out=out,
        addition=addition,
        base=base,
        base_root=bank_path,
        base_files=base_files,
        previous=previous,
        previous_links=links,
        previous_topics=_ids(raw, "topics"),
    )


def write_validated(target: Target, text: str) -> Bank:
    """Write ``text`` next to ``--out``, validate it (with the bank it extends), then move it in
    place. Nothing is left behind when validation fails."""
    out = target.out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.importing")
    tmp.write_text(text, encoding="utf-8")
    try:
        if target.addition and target.base_root is not None:
            bank = load_bank(target.base_root, files=[*target.base_files, tmp])
        else:
            bank = load_bank(tmp, files=[tmp])
    except BankError as exc:
        tmp.unlink(missing_ok=True)
        report = exc.report().replace(os.path.relpath(tmp), str(out)).replace(str(tmp), str(out))
        raise ImportFailed(f"the result does not validate; {out} was not written:\n{report}") from None
    os.replace(tmp, out)
    return bank
