"""The feedback a person reads after an answer, as plain lines shared by the chat and the terminal.

Order: the score with its verdict, mistakes (misconceptions and reversed claims with their
corrections), the key points covered, hints for the missed ones (each a whole sentence), notes on
form (a list of terms, too short, "not sure"), the LLM examiner's comment and follow-up, and a note
when the LLM examiner was unavailable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.bank import Question
from bot.core.grading import Grade, hint
from bot.i18n import t

MARKS = {"good": "✅", "partial": "🟡", "weak": "❌"}


@dataclass(frozen=True, slots=True)
class Line:
    text: str
    kind: str = "text"  # text | score | error | covered | missed | note | heading


def charges(grade: Grade) -> list[str]:
    """The grade's charges in the order they are shown (and numbered): ``m<i>``, then ``k<i>``."""
    return [f"m{i}" for i in grade.misconceptions] + [f"k{i}" for i in grade.contradicted]


def charge_lines(q: Question, grade: Grade, lang: str) -> list[Line]:
    """Each charge with the sentence of the answer that made it («Вы написали: «…» — неверно: …»),
    numbered when there are several (the «Это не ошибка (n)» buttons name them); a charge without
    its sentence (the LLM examiner's) names the claim instead."""
    evidence = dict(zip(grade.misconceptions, grade.evidence, strict=False))
    reversal = dict(zip(grade.contradicted, grade.reversal_evidence, strict=False))
    found: list[tuple[str, dict[str, str]]] = []  # (the line's key, its values) in the shown order
    for i in grade.misconceptions:
        if i < len(q.misconceptions):
            m = q.misconceptions[i]
            if i in evidence:
                found.append(("practice.charged", {"sentence": evidence[i], "correction": m.correction}))
            else:
                found.append(("practice.wrong", {"claim": m.claim, "correction": m.correction}))
    for i in grade.contradicted:
        if i < len(q.key_points):
            point = hint(q.key_points[i])
            if i in reversal:
                found.append(("practice.charged_reversed", {"sentence": reversal[i], "point": point}))
            else:
                found.append(("practice.reversed", {"point": point}))
    several = len(found) > 1
    shown: list[Line] = []
    for number, (key, values) in enumerate(found, 1):
        prefix = {"n": f"{number}. " if several else ""} if "sentence" in values else {}
        shown.append(Line(t(lang, key, **prefix, **values), "error"))
    return shown


def feedback_lines(
    q: Question, grade: Grade, lang: str, *, fallback: str = "", disputed: Sequence[str] = ()
) -> list[Line]:
    lines = [
        Line(
            t(lang, "practice.score", mark=MARKS[grade.verdict], score=grade.percent,
              verdict=t(lang, f"practice.verdict_{grade.verdict}")),
            "score",
        )
    ]  # fmt: skip
    errors = charge_lines(q, grade, lang)
    errors += [Line(t(lang, "practice.wrong", claim=c, correction=fix), "error") for c, fix in grade.errors]
    errors += [
        Line(
            t(lang, "practice.ask_claim", sentence=sentence, claim=q.misconceptions[i].claim.rstrip("."),
              claim_inline=_mid_sentence(q.misconceptions[i].claim.rstrip(".")),
              correction=q.misconceptions[i].correction),
            "note",
        )
        for i, sentence in grade.asks
        if i < len(q.misconceptions)
    ]  # fmt: skip
    errors += [Line(t(lang, "practice.dispute_note", claim=claim), "note") for claim in disputed]
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
    if grade.disagreement is not None:
        lines.append(Line(t(lang, "practice.disagreement", llm=grade.disagreement, score=grade.percent), "note"))
    if fallback:
        lines.append(Line(t(lang, "practice.fallback", reason=t(lang, f"practice.fallback_{fallback}")), "note"))
    return lines


def _mid_sentence(claim: str) -> str:
    """A claim put inside a sentence («вы имели в виду, что любое действие …»): a Russian first word in lower
    case; a Latin one (Adam, Medusa, LoRA, KV) and an acronym as written."""
    first = claim.split(" ", 1)[0]
    if len(first) > 1 and ("А" <= first[0] <= "Я" or first[0] == "Ё") and first[1:].islower() and first.isalpha():
        return claim[0].lower() + claim[1:]
    return claim
