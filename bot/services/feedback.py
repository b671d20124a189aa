"""The feedback a person reads after an answer, as plain lines shared by the chat and the terminal.

Order: the score with its verdict, mistakes (misconceptions and reversed claims with their
corrections), the key points covered, hints for the missed ones (each a whole sentence), notes on
form (a list of terms, too short, "not sure"), the LLM examiner's comment and follow-up, and a note
when the LLM examiner was unavailable.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.bank import Question
from bot.core.grading import Grade, hint
from bot.i18n import t

MARKS = {"good": "✅", "partial": "🟡", "weak": "❌"}


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    kind: str = "text"  # text | score | error | covered | missed | note | heading


def feedback_lines(q: Question, grade: Grade, lang: str, *, fallback: str = "") -> list[Line]:
    lines = [
        Line(
            t(lang, "practice.score", mark=MARKS[grade.verdict], score=grade.percent,
              verdict=t(lang, f"practice.verdict_{grade.verdict}")),
            "score",
        )
    ]  # fmt: skip
    errors = [
        Line(
            t(lang, "practice.wrong", claim=q.misconceptions[i].claim, correction=q.misconceptions[i].correction),
            "error",
        )
        for i in grade.misconceptions
        if i < len(q.misconceptions)
    ]
    errors += [Line(t(lang, "practice.wrong", claim=c, correction=fix), "error") for c, fix in grade.errors]
    errors += [
        Line(t(lang, "practice.reversed", point=hint(q.key_points[i])), "error")
        for i in grade.contradicted
        if i < len(q.key_points)
    ]
    lines += errors
    lines.append(Line(t(lang, "practice.covered", covered=len(grade.covered), total=len(q.key_points)), "heading"))
    lines += [Line(f"✓ {q.key_points[i].text}", "covered") for i in grade.covered]
    missed = [i for i in grade.missed if i not in grade.contradicted]
    if missed:
        lines.append(Line(t(lang, "practice.missed"), "heading"))
        lines += [Line(f"• {hint(q.key_points[i])}", "missed") for i in missed]
    if grade.unsure and not grade.covered:
        lines.append(Line(t(lang, "practice.unsure"), "note"))
    elif grade.stuffed:
        lines.append(Line(t(lang, "practice.stuffed"), "note"))
    elif grade.words < 8:
        lines.append(Line(t(lang, "practice.too_short"), "note"))
    if grade.feedback:
        lines.append(Line(t(lang, "practice.examiner"), "heading"))
        lines.append(Line(grade.feedback, "text"))
    if grade.follow_up:
        lines.append(Line(t(lang, "practice.follow_up", question=grade.follow_up), "note"))
    if fallback:
        lines.append(Line(t(lang, "practice.fallback", reason=t(lang, f"practice.fallback_{fallback}")), "note"))
    return lines
