"""``interview-bot import`` and ``interview-bot export``: carrying the bank in and out (Markdown
vaults and CSV in; Anki decks and CSV out)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.bank import Bank, Question
from bot.cli.common import EXIT_FAILED, EXIT_USAGE, configured_bank_path, fail, find_topic, load_bank_reported


def _fail(message: str, code: int = EXIT_FAILED) -> int:
    return fail(message, code)


def _selected(bank: Bank, topics: Sequence[str] | None) -> list[Question] | str:
    """The bank's questions, limited to the given topics (ids or titles); or an error message."""
    if not topics:
        return list(bank.questions.values())
    ids: list[str] = []
    for name in topics:
        topic = find_topic(bank, name)
        if topic is None:
            known = ", ".join(f"{t.id} ({t.title_ru})" for t in bank.topics)
            return f"no topic {name!r}; topics: {known}"
        ids.append(topic.id)
    return [bank.questions[qid] for tid in dict.fromkeys(ids) for qid in bank.topic_question_ids(tid)]


# import ---------------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from bot.interop.csv_io import CsvError, read_csv
    from bot.interop.import_report import format_report, format_result
    from bot.interop.import_target import ImportFailed, plan_target, write_validated
    from bot.interop.importer import Importer
    from bot.interop.markdown_import import read_notes

    source = Path(args.path)
    if not source.exists():
        return _fail(f"{source}: no such file or folder")
    out = Path(args.out) if args.out else Path(f"{source.stem if source.is_file() else source.name}.yaml")
    if out.suffix not in (".yaml", ".yml"):
        return _fail(f"--out {out}: the bank is YAML; use a .yaml file name")
    if out.is_dir():
        return _fail(f"--out {out} is a folder; give a file name such as {out / 'imported.yaml'}")
    if out.exists() and not args.force:
        return _fail(f"{out} already exists; add --force to merge into it and rewrite it (nothing was written)")
    bank_path = None if args.bank == "none" else Path(args.bank) if args.bank else configured_bank_path()
    try:
        target = plan_target(out, bank_path, force=args.force)
        if source.is_file() and source.suffix.lower() == ".csv":
            parsed = read_csv(source)
        else:
            parsed = read_notes(source, keep_list_numbers=args.keep_list_numbers)
        if not parsed.items and not parsed.terms:
            return _fail(f"{source}: no questions found (bullet items under headings, or CSV rows)")
        importer = Importer(target, topic=args.topic)
        importer.run(parsed)
        nothing_new = target.addition and target.previous is None and importer.is_empty()
        report = format_report(importer, parsed, verbose=args.verbose)
        if not nothing_new:
            text = importer.render(source.name)
            importer.release()  # the drafts and the parsed rows are done with: validating needs the room
            parsed.items.clear()
            bank = write_validated(target, text)
    except (ImportFailed, CsvError) as exc:
        return _fail(str(exc))
    print(f"Import of {source} → {out}: {target.describe()}")
    for line in report:
        print(line)
    if nothing_new:
        print(f"Nothing new for the bank {target.base_root}: {out} was not written.")
        return 0
    print(format_result(importer, bank))
    print(f"Wrote {out}.")
    if not target.addition:
        print(f"Use it: BANK_PATH={out} interview-bot practice   (or validate / run)")
    return 0


# export ---------------------------------------------------------------------------------------


def _export_bank(args: argparse.Namespace) -> Bank | None:
    return load_bank_reported(Path(args.bank) if args.bank else configured_bank_path())


def _export_selection(args: argparse.Namespace) -> tuple[Bank, list[Question]] | int:
    """The bank and the questions an export takes (``--topic``), or the exit code after saying why not."""
    bank = _export_bank(args)
    if bank is None:
        return EXIT_FAILED
    questions = _selected(bank, args.topic)
    if isinstance(questions, str):
        return _fail(questions, EXIT_USAGE)
    return bank, questions


def cmd_export_anki(args: argparse.Namespace) -> int:
    from bot.interop.anki import write_deck

    out = Path(args.out)
    if out.suffix != ".apkg":
        return _fail(f"--out {out}: an Anki package ends with .apkg")
    if out.exists() and not args.force:
        return _fail(f"{out} already exists; add --force to overwrite it")
    chosen = _export_selection(args)
    if isinstance(chosen, int):
        return chosen
    bank, questions = chosen
    if not any(True for _ in questions):
        return _fail("no questions to export")
    summary = write_deck(bank, questions, out)
    if summary.notes == 0:
        out.unlink(missing_ok=True)
        return _fail(f"no questions with a reference answer to export ({len(summary.skipped)} need one)")
    print(f"Wrote {out}: {summary.notes} notes in {summary.decks} deck(s) under 'Interview bot'.")
    if summary.skipped:
        print(f"Left out {len(summary.skipped)} question(s) without a reference answer: " + ", ".join(summary.skipped))
    print("Importing a newer export into Anki updates these notes (stable ids) instead of adding copies.")
    return 0


def cmd_export_csv(args: argparse.Namespace) -> int:
    from bot.interop.csv_io import has_depth, write_csv

    chosen = _export_selection(args)
    if isinstance(chosen, int):
        return chosen
    _, questions = chosen
    delimiter, bom = (";", True) if args.excel else (",", False)
    if args.out in (None, "-"):
        rows, warnings = write_csv(questions, sys.stdout, delimiter=delimiter, bom=bom)
    else:
        out = Path(args.out)
        if out.exists() and not args.force:
            return _fail(f"{out} already exists; add --force to overwrite it")
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8", newline="") as stream:
            rows, warnings = write_csv(questions, stream, delimiter=delimiter, bom=bom)
        print(f"Wrote {out}: {rows} questions.", file=sys.stderr)
    for warning in warnings:
        print(f"warning: {warning} — the CSV will not re-import it unchanged", file=sys.stderr)
    deep = sum(1 for q in questions if has_depth(q))
    if deep:
        print(
            f"note: the details, follow-ups and context lines of {deep} question(s) are not in the CSV "
            "(it has the card, key points and terms); the YAML bank and the Anki deck carry them",
            file=sys.stderr,
        )
    return 0


# registration ---------------------------------------------------------------------------------


def add_commands(sub: Any) -> None:
    """Register import and export on the main parser."""
    imp = sub.add_parser(
        "import",
        help="import questions from Markdown notes (a folder or one note) or a CSV into a bank file",
        description="Read Markdown / Quartz notes or a questions CSV and write a bank YAML file. "
        "Existing items are merged, not duplicated; the result is validated before it is written. "
        "See docs/import-export.md.",
    )
    imp.add_argument("path", help="a folder of notes, one note (.md/.txt), or a .csv file")
    imp.add_argument("--out", help="the YAML file to write (default: <name>.yaml here)")
    imp.add_argument("--force", action="store_true", help="--out exists: merge into it and rewrite it")
    imp.add_argument(
        "--bank",
        help="the bank to merge with (default: BANK_PATH or the bundled bank); 'none' for no bank. "
        "An --out inside this bank's folder becomes an addition to it, anywhere else a stand-alone bank",
    )
    imp.add_argument("--topic", help="put every new item in this topic (id or title; new if unknown)")
    imp.add_argument(
        "--keep-list-numbers",
        action="store_true",
        help="keep numbers of lists numbered 1, 2, 3, … (normally those are list numbering)",
    )
    imp.add_argument("-v", "--verbose", action="store_true", help="list every item in the report")
    imp.set_defaults(func=cmd_import)

    exp = sub.add_parser("export", help="export the bank as an Anki deck or CSV")
    exp_sub = exp.add_subparsers(dest="format", required=True, metavar="FORMAT")
    anki = exp_sub.add_parser("anki", help="an Anki package (.apkg); re-importing updates the notes")
    anki.add_argument("--out", default="interview-bot.apkg", help="the .apkg file (default: %(default)s)")
    csv = exp_sub.add_parser("csv", help="CSV with the columns the CSV import reads")
    csv.add_argument("--out", help="the CSV file (default: standard output)")
    csv.add_argument("--excel", action="store_true", help="';' delimiter and a UTF-8 BOM, for Excel")
    for p in (anki, csv):
        p.add_argument("--topic", action="extend", nargs="+", help="only these topics (ids or titles)")
        p.add_argument("--bank", help="bank folder or file (default: BANK_PATH or the bundled bank)")
        p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    anki.set_defaults(func=cmd_export_anki)
    csv.set_defaults(func=cmd_export_csv)
