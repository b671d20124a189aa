"""``interview-bot grade-evidence``: count the words of labelled answers for the grader's word model
(:mod:`bot.core.leaning`).

``grade-evidence FOLDER… --out FILE`` reads answer sets (JSON lines of ``{"question", "kind", "text"}``
or ``"answer"``; a folder's ``*.jsonl`` or one file): a ``fluent_wrong`` answer's sentences count as
wrong, a correct one's (``short``, ``full``, ``spoken``, ``refuting``, ``partial``, ``strong``,
``concise``) as right. It writes one line per question of the bank, sorted, with the counts of the
bank's own texts too (stamped: the grader counts an edited question's texts again), which the bundled
bank ships as ``data/evidence/answers.jsonl``; run it again after editing the bank (a test says when).
Only dev sets go in: a set whose README calls it a test set is refused (a model trained on its test
set measures nothing).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from bot.cli.common import EXIT_USAGE, fail

WRONG_KINDS = frozenset({"fluent_wrong"})
RIGHT_KINDS = frozenset({"short", "full", "spoken", "refuting", "partial", "strong", "concise"})
TEST_MARK = "the whole set is a test set"


def _files(sources: list[str]) -> list[Path] | str:
    out: list[Path] = []
    for source in sources:
        path = Path(source)
        readme = (path if path.is_dir() else path.parent) / "README.md"
        if path.is_dir() and readme.is_file() and TEST_MARK in readme.read_text(encoding="utf-8").lower():
            return f"{path} is a test set (its README says so): never count it"
        if path.is_dir():
            out.extend(sorted(path.glob("*.jsonl")))
        elif path.is_file():
            out.append(path)
        else:
            return f"{path}: no such file or folder"
    return out


def cmd_grade_evidence(args: argparse.Namespace) -> int:
    from bot.cli.grading import _bank
    from bot.core.grading import matcher_for
    from bot.core.leaning import count_texts, group_names

    files = _files(args.sources)
    if isinstance(files, str):
        return fail(files, EXIT_USAGE)
    bank = _bank()
    matcher = matcher_for(bank.lexicon)
    names = group_names(bank.lexicon)
    wrong: dict[str, Counter[str]] = {}
    right: dict[str, Counter[str]] = {}
    n: Counter[tuple[str, str]] = Counter()
    for file in files:
        for lineno, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            obj = json.loads(line)
            qid, kind = str(obj["question"]), obj["kind"]
            if bank.question(qid) is None:
                return fail(f"{file}:{lineno}: unknown question id {qid!r}", EXIT_USAGE)
            side = "wrong" if kind in WRONG_KINDS else "right" if kind in RIGHT_KINDS else None
            if side is None:
                continue
            counter, count = count_texts((obj.get("text") or obj.get("answer") or "",), matcher, names)
            (wrong if side == "wrong" else right).setdefault(qid, Counter()).update(counter)
            n[(qid, side)] += count
    said = _paraphrases(Path(args.paraphrases), bank, matcher, names) if args.paraphrases else {}
    if isinstance(said, str):
        return fail(said, EXIT_USAGE)
    counted = (wrong, right, n, said)
    records = [_record(q, bank, matcher, counted) for q in sorted(bank.questions.values(), key=lambda q: q.id)]
    _guard_topic_texts(records, bank, matcher)
    lines = [json.dumps(r, ensure_ascii=False) for r in records]  # "question" first: the grader indexes by it
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    print(
        f"{out}: {len(lines)} questions, {sum(v for (_, s), v in n.items() if s == 'wrong')} wrong and "
        f"{sum(v for (_, s), v in n.items() if s == 'right')} right sentences from {len(files)} files"
    )
    return 0


def _record(q: Any, bank: Any, matcher: Any, counted: tuple[Any, Any, Any, Any]) -> dict[str, Any]:
    """One question's line: its text stamp, its bank part (stamped), its answers' and paraphrases' counts."""
    from bot.core.leaning import bank_counts, bank_stamp, claim_stamp, text_stamp

    wrong, right, n, said = counted
    qid = q.id
    return {
        "question": qid,
        "text": text_stamp(q.text),
        "bank_stamp": bank_stamp(q),
        "bank": _sorted(bank_counts(q, matcher, bank.lexicon)),
        "answers": {
            "n_wrong": n[(qid, "wrong")],
            "n_right": n[(qid, "right")],
            "wrong": dict(sorted(wrong.get(qid, Counter()).items())),
            "right": dict(sorted(right.get(qid, Counter()).items())),
        },
        "said": [
            {"claim": claim_stamp(m.claim), **_said_counts(said.get((qid, i)))} for i, m in enumerate(q.misconceptions)
        ],
    }


def _guard_topic_texts(records: list[dict[str, Any]], bank: Any, matcher: Any) -> None:
    """Add to each record the sentences of its topic's other correct texts (cards, details, follow-ups,
    corrections) that its word models would charge or ask about: they are right by the bank's own word,
    and the grader leaves a sentence restating one alone (issue 28's self-consistency)."""
    from bot.core.leaning import build_model, leans

    by_topic: dict[str, list[tuple[str, list[frozenset[str]]]]] = {}
    for record in records:
        q = bank.question(record["question"])
        sentences = [frozenset(keys) for keys in record["bank"]["own"]]
        by_topic.setdefault(q.topic, []).append((q.id, sentences))
    for record in records:
        q = bank.question(record["question"])
        model = build_model(q, matcher, bank.lexicon, record)
        guarded: set[tuple[str, ...]] = set()
        for other, sentences in by_topic[q.topic]:
            if other == q.id:
                continue
            before: frozenset[str] = frozenset()
            for keys in sentences:
                if leans(model, keys, keys | before):
                    guarded.add(tuple(sorted(keys)))
                before = keys
        record["guarded"] = [list(keys) for keys in sorted(guarded)]


def _paraphrases(
    path: Path, bank: Any, matcher: Any, names: dict[str, str]
) -> dict[tuple[str, int], tuple[Counter[str], int]] | str:
    """Per (question, misconception index), the counts of the sentences written to say it."""
    from bot.core.leaning import count_texts

    out: dict[tuple[str, int], tuple[Counter[str], int]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = json.loads(line)
        q = bank.question(str(obj["question"]))
        index = int(obj["misconception"])
        if q is None or not 0 <= index < len(q.misconceptions):
            return f"{path}:{lineno}: no misconception {index} of question {obj['question']!r}"
        counts, n = count_texts((obj["text"],), matcher, names)
        old = out.get((q.id, index), (Counter(), 0))
        out[(q.id, index)] = (old[0] + counts, old[1] + n)
    return out


def _said_counts(found: tuple[Counter[str], int] | None) -> dict[str, Any]:
    counts, n = found or (Counter(), 0)
    return {"n": n, "wrong": dict(sorted(counts.items()))}


def _sorted(counts: dict[str, Any]) -> dict[str, Any]:
    """Count tables sorted by key, so that a remade file differs only where the counts do."""
    out = {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in counts.items()}
    out["said"] = [{**x, "wrong": dict(sorted(x["wrong"].items()))} for x in counts["said"]]
    return out


def add_commands(sub: Any) -> None:
    """Register grade-evidence on the main parser."""
    ev = sub.add_parser("grade-evidence", help="count labelled dev answers' words for the grader's word model")
    ev.add_argument("sources", nargs="+", help="answer sets: folders of JSON lines, or JSON-lines files")
    ev.add_argument(
        "--paraphrases", metavar="FILE", help="how candidates say each misconception (data/evidence/paraphrases.jsonl)"
    )
    ev.add_argument("--out", required=True, help="where to write (the bundled bank's: data/evidence/answers.jsonl)")
    ev.set_defaults(func=cmd_grade_evidence)
