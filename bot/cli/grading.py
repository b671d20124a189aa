"""``interview-bot disputes``, ``grade`` and ``grade-eval``: the charges users disputed, grading answers
from files, measuring the grader's agreement with an expert.

``disputes`` lists the charges users disputed («Это не ошибка»), most disputed first, or writes them
as JSON lines (``--jsonl FILE``).

``grade --jsonl FILE`` reads one ``{"question": "<id>", "answer": "<text>"}`` per line and
prints one ``{"question", "score", "verdict", "covered", "missed", "misconceptions", "evidence",
"reversed", "asks"}`` per line: ``evidence`` is ``[{"misconception": <index>, "sentence": <the answer's
sentence>}]`` for each charge, ``reversed`` the same for key points stated the other way round, ``asks``
the claims the grader is unsure of (asked about, not charged). This interface is stable: answers from
outside the repository are graded through it.

``grade-eval FILE`` grades a labelled YAML set (``tests/fixtures/grader_set.yaml``) and prints Spearman
with the expert's score, precision/recall/F1 per class and the mean score per kind of answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING, Any

from bot.bank import Bank, Question
from bot.cli.common import EXIT_USAGE, fail, load_bank_or_exit
from bot.config import SettingsError, load_settings
from bot.core import evaluation

if TYPE_CHECKING:
    from bot.core.grading import Grade


def _fail(message: str) -> int:
    return fail(message, EXIT_USAGE)


def _bank() -> Bank:
    """The bank, loaded as ``interview-bot run`` loads it."""
    return load_bank_or_exit(load_settings())


def _grader(name: str, bank: Bank) -> Any:
    """The grader the settings (or ``--grader``) choose, reading with the bank's lexicon."""
    from bot.services.graders import build_grader

    settings = load_settings()
    if name:
        settings = settings.model_copy(update={"grader": name})
    return build_grader(settings, bank.lexicon)


def _result(q: Question, g: Grade) -> dict[str, object]:
    return {
        "question": q.id,
        "score": g.score,
        "verdict": g.verdict,
        "covered": list(g.covered),
        "missed": list(g.missed),
        "misconceptions": list(g.misconceptions),
        "evidence": [{"misconception": i, "sentence": s} for i, s in zip(g.misconceptions, g.evidence, strict=False)],
        "reversed": [
            {"key_point": i, "sentence": s} for i, s in zip(g.contradicted, g.reversal_evidence, strict=False)
        ],
        "asks": [{"misconception": i, "sentence": s} for i, s in g.asks],
    }


def cmd_disputes(args: argparse.Namespace) -> int:
    """The charges users disputed («Это не ошибка»), most disputed first, or as JSON lines: what the
    rubric's authors fix the bank from."""
    import asyncio
    import json
    from collections import Counter

    from bot.db.engine import DATABASE_ERRORS, Database, database_problem, migrate_sync
    from bot.services import disputes

    settings = load_settings()
    try:
        migrate_sync(settings.database_url)
        db = Database(settings.database_url)

        async def fetch() -> list[Any]:
            try:
                return await disputes.all_disputes(db)
            finally:
                await db.close()

        rows = asyncio.run(fetch())
    except DATABASE_ERRORS as exc:
        raise SettingsError(database_problem(exc, settings.database_url)) from None
    if args.jsonl is not None:
        out = sys.stdout if args.jsonl == "-" else open(args.jsonl, "w", encoding="utf-8")  # noqa: SIM115
        try:
            for d in rows:
                line = {"question": d.question_id, "charge": d.charge, "claim": d.claim, "sentence": d.sentence,
                        "at": d.created_at.isoformat()}  # fmt: skip
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
        finally:
            if out is not sys.stdout:
                out.close()
        if args.jsonl != "-":
            print(f"{len(rows)} dispute(s) written to {args.jsonl}")
        return 0
    if not rows:
        print("no disputes")
        return 0
    counts = Counter((d.question_id, d.charge, d.claim) for d in rows)
    print(f"{len(rows)} dispute(s) of {len(counts)} charge(s):")
    for (qid, charge, claim), n in counts.most_common():
        print(f"{n:>5}  {qid} {charge}  {claim}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    path = Path(args.jsonl)
    try:
        lines = path.read_text(encoding="utf-8").splitlines() if args.jsonl != "-" else sys.stdin.read().splitlines()
    except OSError as exc:
        return _fail(f"cannot read {path}: {exc.strerror}")
    items: list[tuple[int, str, str]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            ref, answer = obj["question"], obj["answer"]
            if isinstance(ref, bool) or not isinstance(ref, str | int) or not isinstance(answer, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _fail(f'{path}:{n}: expected {{"question": "<id>", "answer": "<text>"}}')
        items.append((n, str(ref), answer))
    bank = _bank()
    found: list[tuple[Question, str]] = []
    for n, ref, answer in items:
        # what the bot shows (958, #958, q463, t13) or the id (serving-08)
        q = bank.resolve(ref)
        if q is None:
            return _fail(
                f"{path}:{n}: unknown question {ref!r} (a number as the bot shows it, like 958 or t13, or an id)"
            )
        found.append((q, answer))
    grader = _grader(args.grader, bank)
    out = sys.stdout
    for q, answer in found:
        out.write(json.dumps(_result(q, grader.grade_sync(q, answer)), ensure_ascii=False) + "\n")
    out.flush()
    return 0


def cmd_grade_eval(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if path.is_dir() or path.suffix == ".jsonl":
        return _grade_eval_blind(args, path)
    if args.show:
        return _fail("--show reads the blind answers (a folder of JSON lines) only")
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        return _fail(f"cannot read {path}: {exc}")
    bank = _bank()
    grader = _grader(args.grader, bank)
    rows: list[tuple[str, str, float, float]] = []  # question, kind, expert, predicted (0..100)
    for entry in data or []:
        if args.split != "all" and entry.get("split", "dev") != args.split:
            continue
        q = bank.question(str(entry["question"]))
        if q is None:
            return _fail(f"{path}: unknown question id {entry['question']!r}")
        for answer in entry["answers"]:
            g = grader.grade_sync(q, answer.get("text") or "")
            rows.append((q.id, answer["kind"], float(answer["score"]), 100 * g.score))
    if not rows:
        return _fail(f"{path}: no answers in split {args.split!r}")
    print(report(rows, f"{path} · split: {args.split} · grader: {grader.name}"))
    return 0


def _grade_eval_blind(args: argparse.Namespace, path: Path) -> int:
    """The blind answers (tests/fixtures/grader_blind): JSON lines of {question, kind, score, text}, the
    split by :func:`bot.core.evaluation.blind_split`; the targets of issue 28 besides the report."""
    if args.show_correct:
        args.show = "correct"
    if args.show and args.split != "dev":
        return _fail("--show prints answers: only the dev split may be read (the test split is never looked at)")
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    bank = _bank()
    grader = _grader(args.grader, bank)
    rows: list[tuple[str, str, float, float]] = []
    charged: list[bool] = []
    for file in files:
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            q = bank.question(str(obj["question"]))
            if q is None:
                return _fail(f"{file}:{n}: unknown question id {obj['question']!r}")
            if args.split != "all" and evaluation.blind_split(q.id) != args.split:
                continue
            g = grader.grade_sync(q, obj["text"])
            rows.append((q.id, obj["kind"], float(obj["score"]), 100 * g.score))
            charged.append(g.has_errors)
            if args.show and (args.show != "correct" or obj["kind"] in evaluation.CORRECT_KINDS):
                _show(q, obj, g)
    if not rows:
        return _fail(f"{path}: no answers in split {args.split!r}")
    print(report(rows, f"{path} · split: {args.split} · grader: {grader.name}"))
    print()
    print(targets(rows, charged))
    return 0


def _show(q: Question, obj: dict[str, Any], g: Grade) -> None:
    """One dev answer the grader gets wrong by the targets: a correct one charged or weak, a fluent
    wrong one not caught."""
    correct = obj["kind"] in evaluation.CORRECT_KINDS
    bad = (correct and (g.has_errors or g.verdict == "weak")) or (
        obj["kind"] == "fluent_wrong" and not g.has_errors and g.verdict != "weak"
    )
    if not bad:
        return
    print(f"--- {q.id} {obj['kind']} expert {obj['score']} grader {g.percent} covered {list(g.covered)}")
    print(f"    {obj['text']}")
    for i, ev in zip(g.misconceptions, g.evidence, strict=True):
        print(f"    CHARGED m{i} {q.misconceptions[i].claim!r} on «{ev}»")
    for i, ev in zip(g.contradicted, g.reversal_evidence, strict=True):
        print(f"    REVERSED k{i} {q.key_points[i].text!r} on «{ev}»")
    for i, ev in g.asks:
        print(f"    ASKS m{i} {q.misconceptions[i].claim!r} on «{ev}»")


def targets(rows: list[tuple[str, str, float, float]], charged: list[bool]) -> str:
    """Issue 28's targets: correct answers charged or weak, refuting ones charged, fluent wrong caught."""
    correct = [(r, c) for r, c in zip(rows, charged, strict=True) if r[1] in evaluation.CORRECT_KINDS]
    refuting = [c for r, c in zip(rows, charged, strict=True) if r[1] == "refuting"]
    wrong = [(r, c) for r, c in zip(rows, charged, strict=True) if r[1] == "fluent_wrong"]
    bad = sum(1 for r, c in correct if c or r[3] < 35)
    caught = sum(1 for r, c in wrong if c or r[3] < 35)
    lines = ["targets (issue 28):"]
    if correct:
        lines.append(
            f"  correct answers charged or graded weak: {bad}/{len(correct)} = {bad / len(correct):.1%} (≤ 3%)"
        )
        lines.append(f"  correct answers charged: {sum(c for _, c in correct)}/{len(correct)}")
    if refuting:
        lines.append(
            f"  refuting answers charged: {sum(refuting)}/{len(refuting)} = {sum(refuting) / len(refuting):.1%} (≤ 5%)"
        )
    if wrong:
        lines.append(f"  fluent wrong answers caught: {caught}/{len(wrong)} = {caught / len(wrong):.1%} (≥ 85%)")
    expert = [r[2] for r in rows]
    lines.append(f"  Spearman: {evaluation.spearman(expert, [r[3] for r in rows]):.3f} (≥ 0.75)")
    return "\n".join(lines)


def report(rows: list[tuple[str, str, float, float]], title: str) -> str:
    expert = [r[2] for r in rows]
    predicted = [r[3] for r in rows]
    classes = evaluation.per_class(expert, predicted)
    lines = [title, f"answers: {len(rows)}, questions: {len({r[0] for r in rows})}", ""]
    lines.append(f"Spearman with the expert's score: {evaluation.spearman(expert, predicted):.3f}")
    lines.append(f"macro-F1 (correct >= 70, partial 35-69, incorrect < 35): {evaluation.macro_f1(classes):.3f}")
    lines += ["", f"{'class':<11}{'precision':>10}{'recall':>8}{'F1':>7}{'n':>5}"]
    for c in classes:
        lines.append(f"{c.name:<11}{c.precision:>10.3f}{c.recall:>8.3f}{c.f1:>7.3f}{c.support:>5}")
    by_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _, kind, e, p in rows:
        by_kind[kind].append((e, p))
    lines += ["", f"{'kind':<14}{'n':>4}{'expert':>8}{'grader':>8}"]
    for kind in ("strong", "concise", "partial", "fluent_wrong", "off_topic", "empty", "stuffed"):
        if kind in by_kind:
            pairs = by_kind.pop(kind)
            lines.append(f"{kind:<14}{len(pairs):>4}{mean(e for e, _ in pairs):>8.1f}{mean(p for _, p in pairs):>8.1f}")
    for kind, pairs in sorted(by_kind.items()):
        lines.append(f"{kind:<14}{len(pairs):>4}{mean(e for e, _ in pairs):>8.1f}{mean(p for _, p in pairs):>8.1f}")
    strong: dict[str, float] = {}
    wrong: dict[str, float] = {}
    for qid, kind, _, p in rows:
        if kind == "strong":
            strong[qid] = p
        elif kind == "fluent_wrong":
            wrong[qid] = max(p, wrong.get(qid, 0.0))
    both = [q for q in strong if q in wrong]
    if both:
        wins = sum(1 for q in both if strong[q] > wrong[q])
        lines += [
            "",
            f"strong answer above the fluent wrong one: {wins}/{len(both)} questions ({wins / len(both):.0%})",
        ]
    return "\n".join(lines)


def add_commands(sub: Any) -> None:
    """Register disputes, grade and grade-eval on the main parser."""
    disputed = sub.add_parser("disputes", help="list the grader's charges users disputed (or export them)")
    disputed.add_argument("--jsonl", metavar="FILE", help="write them as JSON lines to FILE (- for stdout)")
    disputed.set_defaults(func=cmd_disputes)

    grade = sub.add_parser("grade", help="grade answers from a JSON-lines file, one JSON result per line")
    grade.add_argument(
        "--jsonl", required=True, metavar="FILE", help='lines of {"question": "<id>", "answer": "<text>"} (- for stdin)'
    )
    grade.add_argument("--grader", choices=("keywords", "llm"), default="", help="default: the GRADER setting")
    grade.set_defaults(func=cmd_grade)
    ev = sub.add_parser("grade-eval", help="measure the grader against expert scores in a labelled YAML file")
    ev.add_argument(
        "file", help="labelled answers: a YAML set (tests/fixtures/grader_set.yaml) or the blind answers' folder"
    )
    ev.add_argument("--split", choices=("dev", "test", "all"), default="test")
    ev.add_argument("--grader", choices=("keywords", "llm"), default="")
    ev.add_argument("--show", action="store_true", help="print the dev answers the grader gets wrong (blind set only)")
    ev.add_argument("--show-correct", action="store_true", help="as --show, the correct answers only")
    ev.set_defaults(func=cmd_grade_eval)
