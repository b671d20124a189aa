"""An import's drafts (questions, terms and topics as the importer fills them in) and the bank
YAML they are written as (the bank format of docs/bank-format.md, validated before it is kept)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from bot.bank import FollowUp, KeyPoint, Misconception, Question, Term
from bot.bank.model import Kind
from bot.interop.items import is_placeholder


@dataclass(slots=True)
class QDraft:
    id: str
    kind: Kind
    topic: str
    text: str
    answer: str
    key_points: list[KeyPoint]
    terms: list[str]
    difficulty: int = 2
    number: int | None = None
    source_file: str | None = None
    source_section: str | None = None
    origin: str = "new"  # new | file (already in --out) | bank (copied from the reference bank)
    first_seen: str = ""  # where it was first read in this import
    misconceptions: list[Misconception] = field(default_factory=list)
    details: str | None = None
    follow_ups: list[FollowUp] = field(default_factory=list)
    context: str | None = None
    original: bool = False
    same_as: tuple[str, ...] = ()
    overlaps: tuple[str, ...] = ()

    @property
    def needs_answer(self) -> bool:
        return is_placeholder(self.answer)

    @property
    def label(self) -> str:
        if self.number is None:
            return self.id
        return f"t{self.number}" if self.kind == "task" else str(self.number)


@dataclass(slots=True)
class TDraft:
    id: str
    term_en: str
    term_ru: str
    aliases: list[str]
    definition: str
    questions: list[str]
    origin: str = "new"  # new | file | bank
    bank_links: tuple[str, ...] = ()  # a copied term's links in the reference bank

    @property
    def stub(self) -> bool:
        return is_placeholder(self.definition)

    @property
    def names(self) -> list[str]:
        return [n for n in (self.term_en, self.term_ru, *self.aliases) if n]


@dataclass(slots=True)
class TopicDraft:
    id: str
    title_ru: str
    title_en: str
    order: int
    origin: str = "new"


# YAML ----------------------------------------------------------------------------------------

_NON_PRINTABLE = re.compile(r"[^\t\n\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def ystr(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are valid YAML)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("\u2028", "\\L").replace("\u2029", "\\P").replace("\x85", "\\N")


def _block(text: str, indent: str) -> str:
    lines = text.strip("\n").split("\n")
    literal_ok = (
        lines
        and not lines[0][:1].isspace()
        and all(line == line.rstrip() for line in lines)
        and "\r" not in text
        and not _NON_PRINTABLE.search(text)
        and "\ufeff" not in text
    )
    if not literal_ok:
        return " " + ystr(text.strip())
    body = "\n".join(f"{indent}{line}".rstrip() if line.strip() else "" for line in lines)
    return " |\n" + body


def _flow_list(values: list[str] | tuple[str, ...], *, quote: bool) -> str:
    return "[" + ", ".join(ystr(v) if quote else v for v in values) + "]"


def render_yaml(
    topics: list[TopicDraft], questions: list[QDraft], terms: list[TDraft], source: str, known: set[str] | None = None
) -> str:
    out: list[str] = [
        f"# Written by `interview-bot import` from {source}.",
        "# Questions marked 'needs answer' have a placeholder answer (TODO:) and key points derived",
        "# from the question: write the reference answer and check the key points before use.",
    ]
    if topics:
        out.append("topics:")
        for t in topics:
            out += [
                f"  - id: {t.id}",
                f"    title: {{ru: {ystr(t.title_ru)}, en: {ystr(t.title_en)}}}",
                f"    order: {t.order}",
            ]
        out.append("")
    if questions:
        out.append("questions:")
        for q in questions:
            out += _question_yaml(q, known)
        out.append("")
    if terms:
        out.append("glossary:")
        for term in terms:
            out += _term_yaml(term)
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _question_yaml(q: QDraft, known: set[str] | None) -> list[str]:
    """One entry under ``questions:``; links only to the ``known`` ids."""
    out: list[str] = []
    if q.needs_answer:
        out.append("  # needs answer")
    out.append(f"  - id: {q.id}")
    if q.number is not None:
        out.append(f"    number: {q.number}")
    out += [f"    kind: {q.kind}", f"    topic: {q.topic}", f"    difficulty: {q.difficulty}"]
    source_parts = []
    if q.source_file:
        source_parts.append(f"file: {ystr(q.source_file)}")
    if q.source_section:
        source_parts.append(f"section: {ystr(q.source_section)}")
    if q.original:
        source_parts.append("kind: original")
    if source_parts:
        out.append(f"    source: {{{', '.join(source_parts)}}}")
    if q.context:
        out.append(f"    context: {ystr(q.context)}")
    out += [f"    text: {ystr(q.text)}", f"    terms: {_flow_list(q.terms, quote=False)}"]
    for key, ids in (("same_as", q.same_as), ("overlaps", q.overlaps)):
        kept = [x for x in ids if known is not None and x in known]
        if kept:
            out.append(f"    {key}: {_flow_list(kept, quote=False)}")
    out.append("    key_points:")
    for kp in q.key_points:
        out.append(f"      - text: {ystr(kp.text)}")
        if not kp.core:
            out.append("        weight: bonus")
        out.append(f"        match: {_flow_list(kp.match, quote=True)}")
    out += _misconceptions_yaml(q)
    out.append("    answer:" + _block(q.answer, "      "))
    if q.details:
        out.append("    details:" + _block(q.details, "      "))
    if q.follow_ups:
        out.append("    follow_ups:")
        for f in q.follow_ups:
            out += [f"      - question: {ystr(f.question)}", f"        answer: {ystr(f.answer)}"]
    return out


def _misconceptions_yaml(q: QDraft) -> list[str]:
    if not q.misconceptions:
        return []
    out = ["    misconceptions:"]
    for m in q.misconceptions:
        out += [f"      - claim: {ystr(m.claim)}", f"        correction: {ystr(m.correction)}"]
        if not m.core:
            out.append("        weight: side")
        if m.subject:
            out.append(f"        subject: {_flow_list(m.subject, quote=True)}")
        out.append(f"        predicate: {_flow_list(m.match, quote=True)}")
        if m.object:
            out.append(f"        object: {_flow_list(m.object, quote=True)}")
    return out


def _term_yaml(term: TDraft) -> list[str]:
    """One entry under ``glossary:``."""
    names = f"en: {ystr(term.term_en)}" + (f", ru: {ystr(term.term_ru)}" if term.term_ru else "")
    out = [f"  - id: {term.id}", f"    term: {{{names}}}"]
    if term.aliases:
        out.append(f"    aliases: {_flow_list(term.aliases, quote=True)}")
    out.append(f"    definition: {ystr(term.definition)}")
    if term.questions:
        out.append(f"    questions: {_flow_list(term.questions, quote=False)}")
    return out


def draft_of(q: Question, origin: str) -> QDraft:
    """The draft of a bank question (``origin``: where it came from), to merge into and write again."""
    return QDraft(
        id=q.id,
        kind=q.kind,
        topic=q.topic,
        text=q.text,
        answer=q.answer,
        key_points=list(q.key_points),
        terms=list(q.terms),
        difficulty=q.difficulty,
        number=q.number,
        source_file=q.source_file,
        source_section=q.source_section,
        origin=origin,
        misconceptions=list(q.misconceptions),
        details=q.details,
        follow_ups=list(q.follow_ups),
        context=q.context,
        original=q.original,
        same_as=q.same_as,
        overlaps=q.overlaps,
    )


def term_draft_of(term: Term, origin: str, questions: list[str], *, bank_links: tuple[str, ...] = ()) -> TDraft:
    """The draft of a glossary term (``origin``: where it came from) linked to ``questions``."""
    return TDraft(
        term.id, term.term_en, term.term_ru, list(term.aliases), term.definition, questions, origin, bank_links
    )
