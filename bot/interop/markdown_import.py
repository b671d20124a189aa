"""Read Markdown notes (Obsidian / Quartz style) or their plain-text renderings into raw items.

A note is read line by line:

* ``#`` headings are sections; in a note without any ``#`` heading (a page copied as plain text), a
  short line that stands alone and introduces a list is a heading;
* the note's title is its front-matter ``title``, its only level-1 heading, or (plain text) its
  first line; items before any section heading are under the title;
* bullets (``-``, ``*``, ``+``, ``•``) and numbered lines at the outermost level of a list are
  items; ``- 33. text`` keeps the number 33, as does a numbered list ``33.``/``34.`` unless it just
  counts 1, 2, 3, … (then it is ordinary list numbering);
* deeper bullets and paragraphs that follow an item are its answer;
* a note with "Определение" and "Где встречается" sections is a glossary note: the title is the
  term, "Определение" its definition, items under "Где встречается" are questions linked to it and
  under "Практика" tasks;
* ``[[target|label]]`` becomes ``label``; Quartz chrome ("Quartz", "N min read", "Graph View",
  "Backlinks" and what follows it, "800+ вопросов"-style navigation bullets) is dropped.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from bot.bank.model import Kind
from bot.interop.items import Parsed, RawItem, RawTerm, Skip, clean_question, strip_links

NOTE_SUFFIXES: Final = frozenset({".md", ".markdown", ".txt"})
PROGRESS_EVERY: Final = 500

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)([-*+•◦▪‣])\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d{1,7})[.)]\s+(.*)$")
_NUMBER_IN_TEXT = re.compile(r"^(\d{1,7})[.)]\s+(.+)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HR = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_MIN_READ = re.compile(r"^\d+\s*(min read|мин(\.|ут[аы]?)?( чтения)?)$", re.I)
_NAV = re.compile(r"^\d+\+\s*\S.*$|^(назад|вперёд|вперед|home|главная|все вопросы|all questions)$", re.I)
_CHROME_LINES: Final = {
    "graph view": "Graph View",
    "table of contents": "Table of Contents",
    "на этой странице": "Table of Contents",
    "explorer": "Explorer",
    "search": "Search",
    "поиск": "Search",
}
_END_LINES: Final = {"backlinks", "no backlinks found", "обратные ссылки"}
_FOOTER = re.compile(r"^created with quartz", re.I)

DEFINITION_SECTIONS: Final = frozenset({"определение", "definition"})
WHERE_SECTIONS: Final = frozenset({"где встречается", "where it occurs", "where it appears", "used in"})
PRACTICE_SECTIONS: Final = frozenset({"практика", "practice", "практические задачи", "задачи"})
_GLOSSARY_SECTIONS: Final = DEFINITION_SECTIONS | WHERE_SECTIONS | PRACTICE_SECTIONS


def _section_key(text: str) -> str:
    text = strip_links(text)[0].strip().strip("*_#:").strip()
    return " ".join(text.casefold().split())


@dataclass(slots=True)
class _Line:
    no: int  # 1-based
    kind: str  # blank | heading | bullet | text | code
    text: str
    indent: int = 0
    level: int = 0  # heading level
    number: int | None = None  # numbered list marker
    raw: str = ""


def _frontmatter(lines: list[str]) -> tuple[dict[str, object], int]:
    if not lines or lines[0].strip() != "---":
        return {}, 0
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            block = "\n".join(lines[1:i])
            try:
                meta = None if _has_aliases(block) else yaml.safe_load(block)
            except yaml.YAMLError:
                meta = None
            return (meta if isinstance(meta, dict) else {}), i + 1
    return {}, 0


def _has_aliases(block: str) -> bool:
    """Whether YAML uses anchors or aliases (a "billion laughs" expands a few lines into gigabytes):
    front matter never needs them, so such front matter is ignored."""
    try:
        return any(isinstance(t, yaml.AnchorToken | yaml.AliasToken) for t in yaml.scan(block))
    except yaml.YAMLError:
        return True


def _tokenize(lines: list[str], start: int, chrome: Callable[[str], None]) -> list[_Line]:
    out: list[_Line] = []
    fence: str | None = None
    first_content = True
    for i in range(start, len(lines)):
        raw = lines[i].rstrip("\r\n").replace("\t", "    ").rstrip()
        no = i + 1
        if fence is not None:
            out.append(_Line(no, "code", raw, raw=raw))
            if raw.strip().startswith(fence):
                fence = None
            continue
        if m := _FENCE.match(raw):
            fence = m.group(1)
            out.append(_Line(no, "code", raw, indent=len(raw) - len(raw.lstrip()), raw=raw))
            continue
        stripped = raw.strip()
        if not stripped or _HR.match(raw):
            out.append(_Line(no, "blank", ""))
            continue
        low = stripped.casefold()
        if first_content and low == "quartz":
            chrome("Quartz")
            continue
        first_content = False
        if low in _END_LINES:
            chrome("Backlinks")
            break
        if low in _CHROME_LINES:
            chrome(_CHROME_LINES[low])
            continue
        if _MIN_READ.match(stripped):
            chrome("N min read")
            continue
        if _FOOTER.match(stripped):
            chrome("footer")
            continue
        if stripped.startswith("%%") and stripped.endswith("%%"):
            continue  # Obsidian comment
        if m := _HEADING.match(raw):
            out.append(_Line(no, "heading", m.group(2), level=len(m.group(1)), raw=raw))
        elif m := _BULLET.match(raw):
            out.append(_Line(no, "bullet", m.group(3).strip(), indent=len(m.group(1)), raw=raw))
        elif m := _NUMBERED.match(raw):
            out.append(_Line(no, "bullet", m.group(3).strip(), indent=len(m.group(1)), number=int(m.group(2)), raw=raw))
        else:
            out.append(_Line(no, "text", stripped, indent=len(raw) - len(raw.lstrip()), raw=raw))
    return out


def _plain_headings(tokens: list[_Line], chrome: Callable[[str], None]) -> None:
    """In a note without ``#`` headings: the first line is the title (level 1); a short line that
    stands alone (after a blank line or a heading) and introduces a list is a section (level 2);
    a glossary section name always is. A repeated title line (Quartz breadcrumb) is dropped."""
    title_seen = False
    for i, tok in enumerate(tokens):
        if tok.kind == "bullet":
            title_seen = True  # no title after the first item
        if tok.kind != "text":
            continue
        prev = next((t for t in reversed(tokens[:i]) if t.kind != "blank"), None)
        if not title_seen:
            tok.kind, tok.level = "heading", 1
            title_seen = True
            continue
        if prev is not None and prev.kind == "heading" and prev.level == 1 and prev.text == tok.text:
            tok.kind = "blank"  # breadcrumb + title: the same line twice
            chrome("repeated title")
            continue
        if _section_key(tok.text) in _GLOSSARY_SECTIONS:
            tok.kind, tok.level = "heading", 2
            continue
        standalone = i == 0 or tokens[i - 1].kind in ("blank", "heading")
        following = next((t for t in tokens[i + 1 :] if t.kind != "blank"), None)
        short = len(tok.text) <= 80 and not tok.text.endswith((".", "!", "?", ",", ";"))
        if standalone and short and following is not None and following.kind == "bullet":
            tok.kind, tok.level = "heading", 2
            tok.text = tok.text.rstrip(":").strip()


@dataclass(slots=True)
class _Open:
    item: RawItem
    indent: int
    answer: list[_Line]
    pending_blank: bool = False


class _NoteReader:
    def __init__(self, text: str, source: str, stem: str, parsed: Parsed, keep_list_numbers: bool) -> None:
        self.source = source
        self.parsed = parsed
        self.keep_list_numbers = keep_list_numbers
        lines = text.lstrip("\ufeff").splitlines()
        meta, start = _frontmatter(lines)
        self.meta = meta
        self.tokens = _tokenize(lines, start, self._chrome)
        if not any(t.kind == "heading" for t in self.tokens):
            _plain_headings(self.tokens, self._chrome)
        self.title = self._title(stem)
        self.glossary = self._is_glossary()

    def _chrome(self, what: str) -> None:
        self.parsed.chrome[what] += 1

    def _title(self, stem: str) -> str:
        title = self.meta.get("title")
        if isinstance(title, str) and title.strip():
            return title.strip()
        headings = [t for t in self.tokens if t.kind == "heading"]
        level1 = [t for t in headings if t.level == 1]
        if len(level1) == 1 and headings[0] is level1[0]:
            return strip_links(level1[0].text)[0].strip()
        return stem

    def _is_glossary(self) -> bool:
        keys = {_section_key(t.text) for t in self.tokens if t.kind in ("heading", "text", "bullet")}
        return bool(keys & DEFINITION_SECTIONS) and bool(keys & WHERE_SECTIONS)

    def _aliases(self) -> list[str]:
        aliases = self.meta.get("aliases") or self.meta.get("alias") or []
        if isinstance(aliases, str):
            aliases = [aliases]
        if not isinstance(aliases, list):
            return []
        return [str(a).strip() for a in aliases if str(a).strip()]

    # ------------------------------------------------------------------------------------------
    def read(self) -> None:
        self.term: RawTerm | None = None
        if self.glossary:
            first = next((t.no for t in self.tokens if t.kind == "heading"), 1)
            self.term = RawTerm(self.title, self.source, first, aliases=self._aliases())
        self.section: str | None = None  # the current section heading
        self.mode = ""  # glossary notes: definition | where | practice | other
        self.definition: list[str] = []
        self.current: _Open | None = None
        self.numbered: dict[int, list[RawItem]] = {}  # items of numbered lists, per section
        self.section_no = 0
        for tok in self.tokens:
            if tok.kind == "heading":
                self._heading(tok)
            elif tok.kind == "blank":
                if self.current is not None:
                    self.current.pending_blank = True
            elif tok.kind == "bullet" and (self.current is None or tok.indent <= self.current.indent):
                self._bullet(tok)
            else:
                self._inside(tok)
        self._close()
        if not self.keep_list_numbers:  # "1. 2. 3." is list numbering, not question numbers
            for items in self.numbered.values():
                if [i.number for i in items] == list(range(1, len(items) + 1)):
                    for i in items:
                        i.number = None
        if self.term is not None:
            self.term.definition = " ".join(self.definition).strip() or None
            self.parsed.terms.append(self.term)

    def _close(self) -> None:
        """The open item is done: its answer lines become its answer."""
        if self.current is not None:
            answer = _render_answer(self.current.answer, self.current.indent)
            if answer:
                self.current.item.answer = answer
            self.current = None

    def _heading(self, tok: _Line) -> None:
        self._close()
        self.section_no += 1
        heading = strip_links(tok.text)[0].strip()
        key = _section_key(heading)
        if not self.glossary:
            self.section = heading
        elif tok.level > 1 or key in _GLOSSARY_SECTIONS:
            self.mode, self.section = _gloss_mode(key), heading

    def _bullet(self, tok: _Line) -> None:
        """A bullet at the open item's level or above: a new item (or a glossary note's section)."""
        self._close()
        key = _section_key(tok.text)
        if self.glossary and key in _GLOSSARY_SECTIONS:  # "- Практика" as a bullet
            self.section_no += 1
            self.mode, self.section = _gloss_mode(key), strip_links(tok.text)[0].strip().strip("*_:").strip()
            return
        if self.glossary and self.mode == "definition":
            self.definition.append(strip_links(tok.text)[0].strip())
            return
        item = self._item(tok, self.section, self.mode)
        if item is None:
            return
        if self.glossary and self.mode not in ("where", "practice"):
            reason = f"glossary note section {self.section!r} lists no questions"
            self.parsed.skipped.append(Skip(item.where, item.text, reason))
            return
        self.current = _Open(item, tok.indent, [])
        self._emit(item, self.term)
        if tok.number is not None:
            self.numbered.setdefault(self.section_no, []).append(item)

    def _inside(self, tok: _Line) -> None:
        """Deeper bullets, paragraphs, code: the open item's answer, or the term's definition."""
        if self.current is not None:
            if self.current.pending_blank and self.current.answer:
                self.current.answer.append(_Line(0, "blank", ""))
            self.current.pending_blank = False
            self.current.answer.append(tok)
        elif self.glossary and self.mode == "definition" and tok.kind == "text":
            self.definition.append(strip_links(tok.text)[0].strip())

    def _item(self, tok: _Line, section: str | None, mode: str) -> RawItem | None:
        text, targets = clean_question(tok.text)
        number = tok.number
        if number is None and (m := _NUMBER_IN_TEXT.match(text)):
            number, text = int(m.group(1)), m.group(2).strip()
        where = f"{self.source}:{tok.no}"
        if not text:
            self.parsed.skipped.append(Skip(where, tok.text, "empty item"))
            return None
        if number is None and _NAV.match(text):
            self.parsed.skipped.append(Skip(where, text, "navigation link, not a question"))
            return None
        kind: Kind = "task" if self.glossary and mode == "practice" else "question"
        return RawItem(
            text=text,
            source_file=self.source,
            line=tok.no,
            kind=kind,
            number=number,
            section=section if section is not None else self.title,
            topic=self.title if self.glossary else (section or self.title),
            terms=targets,
        )

    def _emit(self, item: RawItem, term: RawTerm | None) -> None:
        if term is not None:
            term.links.append(item)
        self.parsed.items.append(item)
        n = len(self.parsed.items)
        if n % PROGRESS_EVERY == 0:
            print(f"… {n} items read", file=sys.stderr, flush=True)


def _gloss_mode(key: str) -> str:
    if key in DEFINITION_SECTIONS:
        return "definition"
    if key in WHERE_SECTIONS:
        return "where"
    if key in PRACTICE_SECTIONS:
        return "practice"
    return "other"


def _render_answer(lines: list[_Line], base: int) -> str:
    """An item's answer in the bank's Markdown subset: nested bullets become "- " lines
    (indented by their depth below the item), paragraphs and code blocks stay."""
    indents = sorted({t.indent for t in lines if t.kind == "bullet"})
    out: list[str] = []
    for tok in lines:
        if tok.kind == "blank":
            out.append("")
        elif tok.kind == "code":
            pad = base + 2
            out.append(tok.raw[pad:] if tok.raw[:pad].strip() == "" else tok.raw.strip())
        elif tok.kind == "bullet":
            depth = indents.index(tok.indent)
            marker = f"{tok.number}." if tok.number is not None else "-"
            out.append("  " * depth + f"{marker} {strip_links(tok.text)[0]}")
        else:
            out.append(strip_links(tok.text)[0])
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out).strip("\n")


MAX_NOTE_BYTES = 2_000_000  # a note, not a dump: larger files are named and left out


def note_files(root: Path) -> list[Path]:
    """Notes under a folder (hidden folders such as .obsidian skipped), in a stable order."""
    if root.is_file():
        return [root]
    found = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if p.is_file() and p.suffix.lower() in NOTE_SUFFIXES:
            found.append(p)
    return found


def read_notes(root: Path, *, keep_list_numbers: bool = False) -> Parsed:
    """Parse a note or a folder of notes."""
    parsed = Parsed(kind="notes")
    inside = (root if root.is_dir() else root.parent).resolve()
    for path in note_files(root):
        source = path.name if root.is_file() else path.relative_to(root).as_posix()
        if not root.is_file() and not path.resolve().is_relative_to(inside):
            parsed.skipped.append(Skip(source, "", "a link to a file outside the folder, not read"))
            continue
        try:
            if path.stat().st_size > MAX_NOTE_BYTES:
                parsed.skipped.append(Skip(source, "", f"larger than {MAX_NOTE_BYTES // 1_000_000} MB, not read"))
                continue
            text = path.read_text(encoding="utf-8-sig")
        except (UnicodeDecodeError, OSError) as exc:
            parsed.skipped.append(Skip(source, "", f"cannot read: {exc}"))
            continue
        parsed.notes += 1
        read_note_text(text, source, parsed, keep_list_numbers=keep_list_numbers, stem=path.stem)
    return parsed


def read_note_text(
    text: str, source: str, parsed: Parsed, *, keep_list_numbers: bool = False, stem: str | None = None
) -> None:
    """Parse one note's text into ``parsed``."""
    _NoteReader(text, source, stem or Path(source).stem, parsed, keep_list_numbers).read()
