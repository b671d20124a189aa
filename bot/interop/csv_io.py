"""Questions as CSV: read a spreadsheet into raw items, write a bank as CSV (the same columns).

Columns (header names are case-insensitive; order is free; only ``question`` is required):

``id, topic, kind, number, question, answer, key points, terms, difficulty``

* ``number``: ``463``; ``t13`` is practice task 13 (as users type it in the bot);
* ``key points``: one point per line (or separated by ``;;``), each ``text: match1|match2``; the
  part after the last ``": "`` is the match list only when it contains ``|`` or is a short phrase;
  a bonus point's line starts with ``(bonus) `` (misconceptions live in the YAML bank only);
* ``terms``: glossary term ids or names separated by commas;
* UTF-8 with or without BOM; the delimiter (``,`` or ``;``) is detected from the header line.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final, TextIO

from bot.bank import KeyPoint, Question
from bot.bank.model import Kind, Weight
from bot.interop.items import Parsed, RawItem, Skip, salient

COLUMNS: Final = ("id", "topic", "kind", "number", "question", "answer", "key points", "terms", "difficulty")
_HEADER_ALIASES: Final = {
    "id": "id",
    "topic": "topic",
    "тема": "topic",
    "kind": "kind",
    "тип": "kind",
    "number": "number",
    "no": "number",
    "номер": "number",
    "№": "number",
    "question": "question",
    "text": "question",
    "вопрос": "question",
    "answer": "answer",
    "ответ": "answer",
    "key points": "key points",
    "keypoints": "key points",
    "ключевые пункты": "key points",
    "terms": "terms",
    "glossary": "terms",
    "термины": "terms",
    "difficulty": "difficulty",
    "сложность": "difficulty",
}
_KINDS: Final[dict[str, Kind]] = {
    "question": "question",
    "вопрос": "question",
    "task": "task",
    "задача": "task",
    "практика": "task",
}
_NUMBER = re.compile(r"^(?:[#№]\s*)?([qtQTкК]?)\s*(\d{1,7})$")
_POINT_SPLIT = re.compile(r"\n|;;")
_TERM_SPLIT = re.compile(r"[,;\n]")


class CsvError(Exception):
    """The file cannot be read as questions CSV."""


def _header_key(name: str) -> str:
    key = " ".join(name.strip().lstrip("\ufeff").casefold().replace("_", " ").split())
    return _HEADER_ALIASES.get(key, key)


def detect_delimiter(header_line: str) -> str:
    """``;`` when the header has more semicolons than commas (outside quotes), else ``,``."""
    outside = re.sub(r'"[^"]*"', "", header_line)
    return ";" if outside.count(";") > outside.count(",") else ","


BONUS = "(bonus) "  # a bonus key point's line starts with it


def parse_key_points(cell: str) -> list[KeyPoint]:
    """``text: match1|match2`` items, one per line or separated by ``;;``."""
    points: list[KeyPoint] = []
    for part in _POINT_SPLIT.split(cell.replace("\r\n", "\n")):
        part = re.sub(r"^\s*(?:[-•*]\s+)", "", part).strip()
        if not part:
            continue
        text, sep, tail = part.rpartition(": ")
        if sep and text.strip() and ("|" in tail or _is_short(tail)):
            match = [m.strip() for m in tail.split("|") if m.strip()]
            text = text.strip()
        else:
            text, match = part, []
        weight: Weight = "core"
        if text.startswith(BONUS):
            weight, text = "bonus", text.removeprefix(BONUS).strip()
        if not match:
            match = salient(text)
        if match:
            points.append(KeyPoint(text, tuple(match), weight))
    return points


def _is_short(phrase: str) -> bool:
    return len(phrase) <= 40 and len(phrase.split()) <= 4


def format_key_points(points: Iterable[KeyPoint]) -> str:
    """The key points cell; a single long match phrase gets a trailing ``|`` so that it still
    reads as a match list, not as part of the text."""
    lines = []
    for kp in points:
        match = "|".join(kp.match)
        if "|" not in match and not _is_short(match):
            match += "|"
        lines.append(f"{'' if kp.core else BONUS}{kp.text}: {match}")
    return "\n".join(lines)


def _unrepresentable(q: Question) -> list[str]:
    """Key points the CSV form cannot carry unchanged."""
    problems = []
    for i, kp in enumerate(q.key_points, 1):
        if "\n" in kp.text or ";;" in kp.text:
            problems.append(f"key point {i} text has a line break or ';;'")
        for m in kp.match:
            if any(s in m for s in ("|", ": ", "\n", ";;")):
                problems.append(f"key point {i} match {m!r} has '|', ': ', ';;' or a line break")
    return problems


def has_depth(q: Question) -> bool:
    """Details, follow-ups or a context line: the YAML bank and the Anki deck carry them, CSV does not."""
    return bool(q.details or q.follow_ups or q.context)


def read_csv(path: Path) -> Parsed:
    """Parse a questions CSV into raw items (nothing is checked against a bank here)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CsvError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CsvError(f"{path}: not UTF-8 text (byte {exc.start}); save the sheet as CSV UTF-8") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    first_line = text.split("\n", 1)[0]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=detect_delimiter(first_line), strict=True)
    parsed = Parsed(kind="csv", notes=1)
    try:
        header = next(reader)
    except StopIteration:
        raise CsvError(f"{path}: empty file") from None
    columns = [_header_key(h) for h in header]
    if "question" not in columns:
        raise CsvError(
            f"{path}: no 'question' column (the header has: {', '.join(h.strip() for h in header)}); "
            f"expected columns: {', '.join(COLUMNS)}"
        )
    unknown = [h for h, c in zip(header, columns, strict=True) if c not in COLUMNS and h.strip()]
    for h in unknown:
        parsed.skipped.append(Skip(f"{path.name}:1", h, "unknown column, ignored"))
    start = 2
    for row in _rows(reader, path):
        line = start
        start = reader.line_num + 1
        cells = {c: unguard(v).strip() for c, v in zip(columns, row, strict=False) if c in COLUMNS}
        if not any(cells.values()):
            continue
        extra = [v for v in row[len(columns) :] if v.strip()]
        if extra:
            hint = " (a ';;' in an unquoted cell of a ';'-separated file splits it: quote the cell)"
            parsed.skipped.append(
                Skip(
                    f"{path.name}:{line}",
                    extra[0][:60],
                    f"{len(extra)} cell(s) beyond the header's {len(columns)} ignored"
                    + (hint if ";" in first_line else ""),
                )
            )
        item = _row_item(cells, path.name, line, parsed)
        if item is not None:
            parsed.items.append(item)
            if len(parsed.items) % 500 == 0:
                print(f"… {len(parsed.items)} rows read", file=sys.stderr, flush=True)
    return parsed


def _rows(reader: Any, path: Path) -> Iterator[list[str]]:
    """The reader's rows; a broken quote is reported at the line its row starts on (an unclosed
    quote would otherwise swallow the rest of the file into one cell)."""
    while True:
        line = reader.line_num + 1
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            what = (
                'a quoted cell that starts here is never closed (a missing ")'
                if "end of data" in str(exc)
                else f'a quote in the middle of a quoted cell ({exc}; write a quote inside a cell as "")'
            )
            raise CsvError(f"{path}:{line}: {what}") from None


def _row_item(cells: dict[str, str], source: str, line: int, parsed: Parsed) -> RawItem | None:
    where = f"{source}:{line}"
    question = " ".join(cells.get("question", "").split())
    if not question:
        parsed.skipped.append(Skip(where, cells.get("answer", "")[:60], "no question text"))
        return None
    notes: list[str] = []
    kind: Kind = "question"
    number: int | None = None
    raw_number = cells.get("number", "")
    if raw_number:
        m = _NUMBER.match(raw_number)
        if m:
            number = int(m.group(2))
            if m.group(1).lower() == "t":
                kind = "task"
        else:
            notes.append(f"number {raw_number!r} is not a number, ignored")
    raw_kind = cells.get("kind", "").casefold()
    if raw_kind:
        if raw_kind in _KINDS:
            kind = _KINDS[raw_kind]
        else:
            notes.append(f"kind {raw_kind!r} is not 'question' or 'task', ignored")
    difficulty: int | None = None
    raw_difficulty = cells.get("difficulty", "")
    if raw_difficulty:
        if raw_difficulty in ("1", "2", "3"):
            difficulty = int(raw_difficulty)
        else:
            notes.append(f"difficulty {raw_difficulty!r} is not 1, 2 or 3, using 2")
    answer = cells.get("answer", "").strip()
    points = parse_key_points(cells.get("key points", ""))
    return RawItem(
        text=question,
        source_file=source,
        line=line,
        kind=kind,
        number=number,
        topic=cells.get("topic") or None,
        answer=answer or None,
        key_points=points or None,
        terms=[t.strip() for t in _TERM_SPLIT.split(cells.get("terms", "")) if t.strip()],
        difficulty=difficulty,
        id=cells.get("id", "").lower() or None,
        notes=notes,
    )


# Export --------------------------------------------------------------------------------------


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): the export
# writes such a cell with a leading apostrophe, which spreadsheets show as text, and the import drops it.
FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")


def guard(cell: str) -> str:
    """A cell a spreadsheet will not run as a formula: ``'`` before a leading = + - @ tab or CR."""
    return "'" + cell if cell.startswith(FORMULA_STARTS) else cell


def unguard(cell: str) -> str:
    """The cell as it was before :func:`guard` (a cell of our own export read back)."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell


def question_row(q: Question) -> list[str]:
    return [guard(cell) for cell in _cells(q)]


def _cells(q: Question) -> list[str]:
    return [
        q.id,
        q.topic,
        q.kind,
        "" if q.number is None else str(q.number),
        q.text,
        q.answer,
        format_key_points(q.key_points),
        ", ".join(q.terms),
        str(q.difficulty),
    ]


def write_csv(
    questions: Iterable[Question], stream: TextIO, *, delimiter: str = ",", bom: bool = False
) -> tuple[int, list[str]]:
    """Write the questions; return the row count and warnings about what CSV cannot carry."""
    if bom:
        stream.write("\ufeff")
    writer = csv.writer(stream, delimiter=delimiter, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    rows = 0
    warnings = []
    for q in questions:
        writer.writerow(question_row(q))
        rows += 1
        warnings += [f"{q.id}: {p}" for p in _unrepresentable(q)]
    return rows, warnings
