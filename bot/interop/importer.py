"""Turn raw items (from notes or CSV) into a bank file: merge with what exists, fill the gaps the
bank format requires, write YAML, validate, report.

Two kinds of output file (see docs/import-export.md):

* an **addition** to a bank folder (``--out`` inside the bank): holds only new topics, questions
  and terms; items the bank already has are merged (not written again); validated together with
  the rest of the bank;
* a **stand-alone** bank (anywhere else): holds its own topics and glossary; items the reference
  bank already has are copied from it (id, answer, key points, terms), so nothing is duplicated
  and ids stay the same; validated alone. ``--bank none`` imports without any reference.

When ``--out`` exists (``--force``), its content is merged too, and what it holds wins: a
hand-written answer is never replaced, a placeholder answer is.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from bot.bank import Question, Term, Topic
from bot.bank.model import Location
from bot.bank.rules import ID_RE
from bot.interop.drafts import QDraft, TDraft, TopicDraft, draft_of, render_yaml, term_draft_of
from bot.interop.import_target import Target
from bot.interop.items import (
    PLACEHOLDER_ANSWER,
    STUB_DEFINITION,
    NameIndex,
    Parsed,
    RawItem,
    RawTerm,
    Skip,
    derive_key_points,
    fit_key_points,
    fits_message,
    has_cyrillic,
    is_placeholder,
    norm_text,
    slug,
)

PROGRESS_EVERY: Final = 500
DEFAULT_TOPIC: Final = "Импорт"
MAX_TERMS: Final = 4


@dataclass(slots=True)
class Report:
    added: list[QDraft] = field(default_factory=list)
    merged: list[tuple[str, str, str]] = field(default_factory=list)  # where, id, how
    skipped: list[Skip] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)
    topics_added: list[TopicDraft] = field(default_factory=list)
    terms_added: list[TDraft] = field(default_factory=list)
    terms_merged: list[tuple[str, str, str]] = field(default_factory=list)
    answers_filled: int = 0
    guessed_terms: int = 0
    kept: int = 0  # items of the existing --out file this import did not mention


Ref = QDraft | Question


class Importer:
    def __init__(self, target: Target, *, topic: str | None = None) -> None:
        self.t = target
        self.base = target.base
        self.topic_override = topic
        self.report = Report()
        self.questions: dict[str, QDraft] = {}
        self.topics: dict[str, TopicDraft] = {}
        self.terms: dict[str, TDraft] = {}
        self.by_number: dict[tuple[str, int], Ref] = {}
        self.by_text: dict[str, Ref] = {}
        self.taken: set[str] = set(self.base.questions) if self.base else set()
        self._next_number: dict[str, int] = {}  # per topic prefix: the next free "<prefix>-NN" (linear import)
        self.touched: set[str] = set()
        self._pending_terms: list[tuple[QDraft, RawItem]] = []
        self._term_index: NameIndex | None = None
        self._load_previous()  # the output file's items come first when matching
        if self.base is not None:
            for q in self.base.questions.values():
                self._index(q)

    # -- the existing output file ------------------------------------------------------------
    def _load_previous(self) -> None:
        prev = self.t.previous
        if prev is None:
            return
        out = self.t.out.resolve()

        def in_out(where: Location | None) -> bool:
            return not self.t.addition or (where is not None and Path(where.file).resolve() == out)

        for tid in self.t.previous_topics:
            topic = prev.topic(tid)
            if topic is not None:
                self.topics[tid] = TopicDraft(tid, topic.title_ru, topic.title_en, topic.order, "file")
        for term in prev.terms.values():
            if in_out(term.where):
                explicit = self.t.previous_links.get(term.id, [])
                self.terms[term.id] = term_draft_of(term, "file", list(explicit))
        for q in prev.questions.values():
            if in_out(q.where):
                draft = draft_of(q, "file")
                self.questions[q.id] = draft
                self.taken.add(q.id)
                self._index(draft)

    def _index(self, q: Ref) -> None:
        if q.number is not None:
            self.by_number.setdefault((q.kind, q.number), q)
        self.by_text.setdefault(norm_text(q.text), q)

    # -- the import --------------------------------------------------------------------------
    def run(self, parsed: Parsed) -> Report:
        self.report.skipped.extend(parsed.skipped)
        resolved: dict[int, str] = {}
        total = len(parsed.items)
        for n, item in enumerate(parsed.items, 1):
            qid = self._add_item(item)
            if qid is not None:
                resolved[id(item)] = qid
            if total >= PROGRESS_EVERY and (n % PROGRESS_EVERY == 0 or n == total):
                print(f"… {n}/{total} items merged", file=sys.stderr, flush=True)
        for term in parsed.terms:
            self._add_term(term, resolved)
        for draft, item in self._pending_terms:
            self._assign_terms(draft, item, exact=parsed.kind == "csv" and bool(item.terms))
        self.report.kept = sum(1 for q in self.questions.values() if q.origin == "file" and q.id not in self.touched)
        return self.report

    def _add_item(self, item: RawItem) -> str | None:
        self.report.remarks.extend(f"{item.where}: {note}" for note in item.notes)
        if not fits_message(item.text, PLACEHOLDER_ANSWER + " (импорт: ….)"):
            self.report.skipped.append(Skip(item.where, item.text[:60], "too long for a Telegram message"))
            return None
        if item.answer and not fits_message(item.text, item.answer):
            self.report.remarks.append(
                f"{item.where}: the answer found for {item.text[:40]!r} does not fit one Telegram message "
                f"with the question ({len(item.answer)} characters); it was not used"
            )
            item.answer = None
        ref: Ref | None = None
        how = ""
        if item.number is not None:
            ref = self.by_number.get((item.kind, item.number))
            how = f"same {'task' if item.kind == 'task' else 'question'} number {item.number}"
        if ref is None:
            ref = self.by_text.get(norm_text(item.text))
            how = "same text"
        if ref is None:
            return self._create(item).id
        if ref.number is not None and item.number is not None and ref.number != item.number:
            how += f" (numbered {item.number} here, {ref.number} in the bank: kept {ref.number})"
        elif norm_text(ref.text) != norm_text(item.text):
            how += f" (text differs, kept: {ref.text[:60]!r})"
        if isinstance(ref, QDraft):
            self._merge(ref, item, how)
            return ref.id
        if self.t.addition:
            self.report.merged.append((item.where, ref.id, f"already in the bank: {how}"))
            if item.answer and not is_placeholder(item.answer):
                self.report.remarks.append(f"{item.where}: the answer in the notes was not used: {ref.id} has one")
            return ref.id
        draft = self._copy_question(ref)
        self.touched.add(draft.id)
        draft.first_seen = item.where
        self.report.merged.append((item.where, ref.id, f"copied from the bank: {how}"))
        return draft.id

    def _merge(self, draft: QDraft, item: RawItem, how: str) -> None:
        if draft.origin in ("new", "bank") and draft.first_seen:
            verb = f"duplicate of {draft.id} ({draft.first_seen}): {how}"
        else:
            verb = f"merged into {draft.id} of the existing file: {how}"
        self.touched.add(draft.id)
        if item.answer and not is_placeholder(item.answer):
            if draft.needs_answer:
                draft.answer = item.answer
                if item.key_points:
                    draft.key_points = fit_key_points(item.key_points, draft.text, draft.answer)[0]
                else:
                    draft.key_points = derive_key_points(draft.text, draft.answer)
                self.report.answers_filled += 1
                verb += "; answer taken from the import"
            elif item.answer.strip() != draft.answer.strip():
                verb += "; kept the existing answer"
        if draft.number is None and item.number is not None and (item.kind, item.number) not in self.by_number:
            draft.number = item.number
            self.by_number[(item.kind, item.number)] = draft
            verb += f"; number {item.number} added"
        self.by_text.setdefault(norm_text(item.text), draft)
        self.report.merged.append((item.where, draft.id, verb))

    def _copy_question(self, q: Question) -> QDraft:
        draft = draft_of(q, "bank")
        self._copy_topic(q.topic)
        for tid in q.terms:
            self._copy_term(tid)
        self.questions[draft.id] = draft
        self._index(draft)
        self.report.added.append(draft)
        return draft

    def _copy_topic(self, topic_id: str) -> None:
        if topic_id in self.topics or self.base is None:
            return
        topic = self.base.topic(topic_id)
        if topic is not None:
            self.topics[topic_id] = TopicDraft(topic.id, topic.title_ru, topic.title_en, topic.order, "bank")

    def _copy_term(self, term_id: str) -> TDraft | None:
        if term_id in self.terms:
            return self.terms[term_id]
        term = self.base.term(term_id) if self.base else None
        if term is None:
            return None
        draft = term_draft_of(term, "bank", [], bank_links=term.questions)
        self.terms[term.id] = draft
        return draft

    def _create(self, item: RawItem) -> QDraft:
        topic = self._topic_for(self.topic_override or item.topic or DEFAULT_TOPIC)
        qid = self._new_id(item, topic)
        answer = item.answer.strip() if item.answer and item.answer.strip() else None
        if answer is None:  # (a placeholder that comes in, e.g. from an exported CSV, stays as it is)
            where = item.source_file + (f", «{item.section}»" if item.section else "")
            answer = f"{PLACEHOLDER_ANSWER} (импорт: {where})."
        if item.key_points:
            points, change = fit_key_points(item.key_points, item.text, answer)
            if change:
                self.report.remarks.append(f"{item.where}: {qid}: {change}")
        else:
            points = derive_key_points(item.text, answer)
        draft = QDraft(
            id=qid,
            kind=item.kind,
            topic=topic,
            text=item.text,
            answer=answer,
            key_points=points,
            terms=[],
            difficulty=item.difficulty or 2,
            number=item.number,
            source_file=item.source_file or None,
            source_section=item.section,
            first_seen=item.where,
        )
        self.questions[qid] = draft
        self.taken.add(qid)
        self._index(draft)
        self.report.added.append(draft)
        self._pending_terms.append((draft, item))
        return draft

    def _new_id(self, item: RawItem, topic: str) -> str:
        if item.id:
            if ID_RE.match(item.id) and item.id not in self.taken:
                return item.id
            self.report.remarks.append(f"{item.where}: id {item.id!r} is invalid or taken; a new one was made")
        if item.number is not None:
            base = f"{'t' if item.kind == 'task' else 'q'}{item.number}"
            candidate, k = base, 2
            while candidate in self.taken:
                candidate, k = f"{base}-{k}", k + 1
            return candidate
        prefix = topic[:28]
        if prefix not in self._next_number:  # once per prefix (a scan per new item made imports quadratic)
            pattern = re.compile(rf"^{re.escape(prefix)}-(\d+)$")
            used = (int(m.group(1)) for qid in self.taken if (m := pattern.match(qid)))
            self._next_number[prefix] = max(used, default=0) + 1
        k = self._next_number[prefix]
        while f"{prefix}-{k:02d}" in self.taken:
            k += 1
        self._next_number[prefix] = k + 1
        return f"{prefix}-{k:02d}"

    # -- topics ------------------------------------------------------------------------------
    def _all_topics(self) -> list[Topic | TopicDraft]:
        found: list[Topic | TopicDraft] = list(self.topics.values())
        if self.base is not None:
            found.extend(t for t in self.base.topics if t.id not in self.topics)
        return found

    def _topic_for(self, hint: str) -> str:
        key = " ".join(hint.casefold().split())
        for topic in self._all_topics():
            if key in (topic.id, topic.title_ru.casefold(), topic.title_en.casefold()):
                if topic.id not in self.topics and not self.t.addition:
                    self._copy_topic(topic.id)
                return topic.id
        taken = {t.id for t in self._all_topics()}
        base_id = slug(hint, fallback="topic")
        tid, k = base_id, 2
        while tid in taken:
            tid, k = f"{base_id}-{k}", k + 1
        order = max((t.order for t in self._all_topics()), default=0) + 10
        title = hint.strip()
        draft = TopicDraft(tid, title, title, order)
        self.topics[tid] = draft
        self.report.topics_added.append(draft)
        return tid

    # -- glossary ----------------------------------------------------------------------------
    def _all_terms(self) -> list[Term | TDraft]:
        found: list[Term | TDraft] = list(self.terms.values())
        if self.base is not None:
            found.extend(t for t in self.base.terms.values() if t.id not in self.terms)
        return found

    def _find_term(self, ref: str) -> Term | TDraft | None:
        key = " ".join(ref.casefold().split())
        if not key:
            return None
        for term in self._all_terms():
            if term.id == key or any(n.casefold() == key for n in term.names):
                return term
        return None

    def _use_term(self, term: Term | TDraft) -> str:
        """The id to put in a question's terms (copying a reference term into a stand-alone bank)."""
        if isinstance(term, Term) and not self.t.addition:
            self._copy_term(term.id)
        return term.id

    def _names_in_use(self) -> dict[str, str]:
        names: dict[str, str] = {}
        for term in self._all_terms():
            for n in term.names:
                names.setdefault(n.casefold(), term.id)
        return names

    def _new_term(self, name: str, definition: str | None, aliases: list[str], where: str) -> TDraft:
        taken = {t.id for t in self._all_terms()}
        base_id = slug(name, fallback="term")
        tid, k = base_id, 2
        while tid in taken:
            tid, k = f"{base_id}-{k}", k + 1
        names = self._names_in_use()
        kept = []
        for alias in dict.fromkeys(a for a in aliases if a.casefold() != name.casefold()):
            if alias.casefold() in names:
                self.report.remarks.append(
                    f"{where}: alias {alias!r} of {name!r} dropped: it names the term {names[alias.casefold()]!r}"
                )
            else:
                kept.append(alias)
        draft = TDraft(tid, name, name if has_cyrillic(name) else "", kept, definition or STUB_DEFINITION, [], "new")
        self.terms[tid] = draft
        self.report.terms_added.append(draft)
        self._term_index = None
        return draft

    def _add_term(self, raw: RawTerm, resolved: dict[int, str]) -> None:
        links = list(dict.fromkeys(resolved[id(i)] for i in raw.links if id(i) in resolved))
        found = self._find_term(raw.name) or next(
            (t for a in raw.aliases if (t := self._find_term(a)) is not None), None
        )
        if found is None:
            draft = self._new_term(raw.name, raw.definition, raw.aliases, raw.where)
            how = ""
        elif isinstance(found, TDraft):
            draft = found
            how = f"merged with the term {found.id}"
            if draft.stub and raw.definition:
                draft.definition = raw.definition
                how += "; definition taken from the note"
        elif self.t.addition:
            missing = [q for q in links if q not in found.questions and q not in self.questions]
            how = f"already in the bank as {found.id}"
            if missing:
                how += f"; not linked there: {', '.join(missing)} (add them to its 'questions')"
            self.report.terms_merged.append((raw.where, found.id, how))
            for qid in links:
                if qid in self.questions and found.id not in self.questions[qid].terms:
                    self.questions[qid].terms.insert(0, found.id)
            return
        else:
            copied = self._copy_term(found.id)
            assert copied is not None
            draft = copied
            how = f"copied from the bank as {found.id}"
        for qid in links:
            if qid not in draft.questions:
                draft.questions.append(qid)
            q = self.questions.get(qid)
            if q is not None and draft.id not in q.terms:
                q.terms.insert(0, draft.id)
        if how:
            self.report.terms_merged.append((raw.where, draft.id, f"{how}; {len(links)} links"))

    def _match_terms(self, text: str) -> list[str]:
        """Terms whose name or alias occurs in the text (:class:`~bot.interop.items.NameIndex`)."""
        if self._term_index is None:
            self._term_index = NameIndex(
                (term.id, name)
                for term in self._all_terms()
                if not (isinstance(term, TDraft) and term.stub)
                for name in term.names
            )
        return self._term_index.find(text)

    def _assign_terms(self, draft: QDraft, item: RawItem, *, exact: bool) -> None:
        terms = list(draft.terms)

        def add(tid: str) -> None:
            if tid not in terms:
                terms.append(tid)

        for ref in item.terms:
            term = self._find_term(ref)
            if term is not None:
                add(self._use_term(term))
            elif exact:  # a CSV names a term that does not exist yet
                add(self._new_term(ref, None, [], item.where).id)
        if not exact:
            for tid in self._match_terms(f"{draft.text}\n{'' if draft.needs_answer else draft.answer}"):
                if len(terms) >= MAX_TERMS:
                    break
                term = self._find_term(tid)
                if term is not None:
                    add(self._use_term(term))
        if not terms:
            terms.append(self._fallback_term(draft))
            self.report.guessed_terms += 1
        draft.terms = terms

    def _fallback_term(self, draft: QDraft) -> str:
        """The term most questions of the same topic link to, else a stub named after the topic."""
        counts: Counter[str] = Counter()
        for q in self.questions.values():
            if q.topic == draft.topic:
                counts.update(q.terms)
        if self.base is not None:
            for qid in self.base.topic_question_ids(draft.topic):
                counts.update(self.base.questions[qid].terms)
        for tid, _ in counts.most_common():
            term = self._find_term(tid)
            if term is not None:
                return self._use_term(term)
        topic = self.topics.get(draft.topic) or (self.base.topic(draft.topic) if self.base else None)
        title = topic.title_ru if topic else draft.topic
        found = self._find_term(title)
        if found is not None:
            return self._use_term(found)
        return self._new_term(title, None, [], draft.first_seen).id

    # -- output ------------------------------------------------------------------------------
    def is_empty(self) -> bool:
        return not (self.questions or self.topics or self.terms)

    def emitted_terms(self) -> list[TDraft]:
        ids = set(self.questions)
        base_ids = set(self.base.questions) if self.base is not None and self.t.addition else set()
        out = []
        for term in self.terms.values():
            links = [q for q in term.bank_links if q in ids]
            links += [q for q in term.questions if q not in links and (q in ids or q in base_ids)]
            term.questions = links
            out.append(term)
        return out

    def release(self) -> None:
        """Drop the drafts and indexes once the YAML is rendered (a large import validates the result
        next, which needs the memory); the counts stay for the report."""
        self.held = (len(self.questions), len(self.topics), len(self.terms))
        self.questions, self.topics, self.terms = {}, {}, {}
        self.by_number, self.by_text, self._pending_terms, self._term_index = {}, {}, [], None

    def counts(self) -> tuple[int, int, int]:
        """(questions and tasks, topics, terms) the file holds."""
        return getattr(self, "held", None) or (len(self.questions), len(self.topics), len(self.terms))

    def render(self, source: str) -> str:
        # links (same_as / overlaps) are kept to the items the file can see: its own, and the
        # bank's when the file is an addition inside the bank folder
        known = set(self.questions)
        if self.t.addition and self.base is not None:
            known.update(self.base.questions)
        return render_yaml(
            sorted(self.topics.values(), key=lambda t: (t.order, t.id)),
            list(self.questions.values()),
            self.emitted_terms(),
            source,
            known,
        )
