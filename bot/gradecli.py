"""``interview-bot grade`` and ``interview-bot grade-eval``: grade answers from files, measure agreement.

``grade --jsonl FILE`` reads one ``{"question": "<id>", "answer": "<text>"}`` per line and prints one
``{"question", "score", "verdict", "covered", "missed", "misconceptions"}`` per line. This interface is
stable: answers from outside the repository are graded through it.

``grade-eval FILE`` grades a labelled YAML set (``tests/fixtures/grader_set.yaml``) and prints Spearman
with the expert's score, precision/recall/F1 per class and the mean score per kind of answer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import mean
from typing import Any

import yaml

from bot.bank import Bank, Question
from bot.core import evaluation
from bot.core.grading import Grade

EXIT_USAGE = 2


def _fail(message: str) -> int:
    print(f"interview-bot: {message}", file=sys.stderr)
    return EXIT_USAGE


def _bank(args: argparse.Namespace) -> Bank:
    """The bank, loaded as ``interview-bot run`` loads it (the loader comes from bot.cli)."""
    bank: Bank = args.load_bank()
    return bank


def _grader(name: str, bank: Bank) -> Any:
    """The grader the settings (or ``--grader``) choose, reading with the bank's lexicon."""
    from bot.config import load_settings
    from bot.services.grading import build_grader

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
    }


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
            qid, answer = obj["question"], obj["answer"]
            if not isinstance(qid, str) or not isinstance(answer, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _fail(f'{path}:{n}: expected {{"question": "<id>", "answer": "<text>"}}')
        items.append((n, qid, answer))
    bank = _bank(args)
    for n, qid, _ in items:
        if bank.question(qid) is None:
            return _fail(f"{path}:{n}: unknown question id {qid!r}")
    grader = _grader(args.grader, bank)
    out = sys.stdout
    for _, qid, answer in items:
        q = bank.question(qid)
        assert q is not None
        out.write(json.dumps(_result(q, grader.grade_sync(q, answer)), ensure_ascii=False) + "\n")
    out.flush()
    return 0


def cmd_grade_eval(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        return _fail(f"cannot read {path}: {exc}")
    bank = _bank(args)
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


def add_commands(sub: Any, load_bank: Callable[[], Bank]) -> None:
    grade = sub.add_parser("grade", help="grade answers from a JSON-lines file, one JSON result per line")
    grade.add_argument(
        "--jsonl", required=True, metavar="FILE", help='lines of {"question": "<id>", "answer": "<text>"} (- for stdin)'
    )
    grade.add_argument("--grader", choices=("keywords", "llm"), default="", help="default: the GRADER setting")
    grade.set_defaults(func=cmd_grade, load_bank=load_bank)
    ev = sub.add_parser("grade-eval", help="measure the grader against expert scores in a labelled YAML file")
    ev.add_argument("file", help="labelled answers, e.g. tests/fixtures/grader_set.yaml")
    ev.add_argument("--split", choices=("dev", "test", "all"), default="test")
    ev.add_argument("--grader", choices=("keywords", "llm"), default="")
    ev.set_defaults(func=cmd_grade_eval, load_bank=load_bank)
