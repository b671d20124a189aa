"""What an import says it did: the report before writing and the one-line result after."""

from __future__ import annotations

from typing import Final

from bot.bank import Bank
from bot.interop.drafts import QDraft
from bot.interop.importer import Importer
from bot.interop.items import Parsed

LIST_LIMIT: Final = 20  # lines per report section unless --verbose


# Report --------------------------------------------------------------------------------------


def _limited(lines: list[str], verbose: bool) -> list[str]:
    if verbose or len(lines) <= LIST_LIMIT:
        return lines
    return [*lines[:LIST_LIMIT], f"    … and {len(lines) - LIST_LIMIT} more (--verbose lists all)"]


def format_report(imp: Importer, parsed: Parsed, *, verbose: bool = False) -> list[str]:
    r = imp.report
    t = imp.t
    lines: list[str] = []
    what = f"{parsed.notes} note(s)" if parsed.kind == "notes" else "CSV"
    glossary_notes = f", {len(parsed.terms)} glossary note(s)" if parsed.terms else ""
    lines.append(f"Read {what}: {len(parsed.items)} items{glossary_notes}.")
    if parsed.chrome:
        chrome = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in parsed.chrome.items())
        lines.append(f"Page chrome dropped: {chrome}.")
    new = [q for q in r.added if q.origin == "new"]
    copied = [q for q in r.added if q.origin == "bank"]
    tasks = sum(1 for q in new if q.kind == "task")
    lines.append(f"Added {len(new)} new: {len(new) - tasks} questions, {tasks} tasks.")
    by_topic: dict[str, list[QDraft]] = {}
    for q in new:
        by_topic.setdefault(q.topic, []).append(q)
    new_topics = {tp.id for tp in r.topics_added}
    added_lines = []
    for topic, qs in by_topic.items():
        mark = " (new topic)" if topic in new_topics else ""
        span = qs[0].id if len(qs) == 1 else f"{qs[0].id} … {qs[-1].id}"
        added_lines.append(f"  + {topic}{mark}: {len(qs)} — {span}")
    lines += added_lines
    if verbose:
        lines += [f"    + {q.id}: {q.text[:90]}" for q in new]
    lines.append(f"Merged {len(r.merged)} with existing items (not duplicated){':' if r.merged else '.'}")
    lines += _limited([f"  = {where}  {qid}: {how}" for where, qid, how in r.merged], verbose)
    if copied:
        lines.append(f"  {len(copied)} of them were copied from the bank with their answers, key points and terms.")
    lines.append(f"Skipped {len(r.skipped)}{':' if r.skipped else '.'}")
    lines += _limited([f"  - {s.where}  {s.text[:60]!r}: {s.reason}" for s in r.skipped], verbose)
    if r.kept:
        lines.append(f"Kept {r.kept} item(s) of the existing {t.out.name} that this import does not contain.")
    if r.terms_added or r.terms_merged:
        lines.append("Glossary:")
        for term in r.terms_added:
            stub = " — stub, needs a definition" if term.stub else ""
            links = f", {len(term.questions)} links" if term.questions else ""
            lines.append(f"  + {term.id} ({term.term_en}{links}){stub}")
        for where, tid, how in r.terms_merged:
            lines.append(f"  = {where}  {tid}: {how}")
    if r.guessed_terms:
        lines.append(f"Glossary links guessed from the topic for {r.guessed_terms} question(s) — check them.")
    if r.answers_filled:
        lines.append(f"Answers filled in from the import: {r.answers_filled}.")
    if r.remarks:
        lines.append("Remarks:")
        lines += _limited([f"  ! {m}" for m in r.remarks], verbose)
    needs = [q for q in imp.questions.values() if q.needs_answer]
    if needs:
        lines.append(
            f"Needs answer: {len(needs)} question(s) have a placeholder answer ('TODO:') and derived key points:"
        )
        lines += _limited([f"  ? {q.id}: {q.text[:80]}" for q in needs], verbose)
    else:
        lines.append("Needs answer: none.")
    return lines


def format_result(imp: Importer, bank: Bank) -> str:
    s = bank.summary()
    what = "the whole bank" if imp.t.addition else "the file alone"
    questions, topics, terms = imp.counts()
    return (
        f"Validated OK ({what}): {s['topics']} topics, {s['questions']} questions, {s['tasks']} tasks, "
        f"{s['terms']} terms. The file holds {questions} question(s) and task(s), "
        f"{topics} topic(s), {terms} term(s)."
    )
