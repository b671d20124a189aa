"""Check the grading rubric of bank questions against the bank's own reference answers.

    python scripts/rubric_check.py [FILE ...] [--bank PATH] [--max-share 0.10]

For every question of the given bank files (all files when none is given) it reports:

- GENERIC   a key point covered by more than --max-share of the OTHER questions' reference answers
            (its match phrases are too generic);
- UNCOVERED a key point its own reference answer does not cover;
- REVERSED  a key point its own reference answer states the opposite of (negation/antonym);
- FALSE+    a misconception detected in its own reference answer (a correct answer would be marked wrong);
- DEAF      a misconception not detected in its own claim text.

Exit code 1 when anything is reported. The same checks run in tests/test_rubric.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.bank import Question, default_bank_path, load_bank
from bot.core.grading import matcher_for
from bot.core.matching import Hit


def check(bank_path: Path, files: list[str], max_share: float) -> list[str]:
    bank = load_bank(bank_path)
    matcher = matcher_for(bank.lexicon)
    questions = list(bank.questions.values())
    answers = {q.id: matcher.tokens(q.answer) for q in questions}
    wanted = {str(Path(f).resolve()) for f in files}

    def selected(q: Question) -> bool:
        return not wanted or (q.where is not None and str(Path(q.where.file).resolve()) in wanted)

    problems: list[str] = []
    for q in questions:
        if not selected(q):
            continue
        own = answers[q.id]
        for i, kp in enumerate(q.key_points):
            hit = matcher.best(kp.match, own)
            if hit is Hit.NONE:
                problems.append(f"{q.id} UNCOVERED key point {i}: {kp.text}")
            elif hit is Hit.FLIPPED:
                problems.append(f"{q.id} REVERSED key point {i}: {kp.text}")
            others = [o.id for o in questions if o.id != q.id and matcher.best(kp.match, answers[o.id]) is Hit.MATCH]
            share = len(others) / max(1, len(questions) - 1)
            if share > max_share:
                culprits = [p for p in kp.match if sum(matcher.find(p, answers[o]) is Hit.MATCH for o in others) > 2]
                problems.append(
                    f"{q.id} GENERIC key point {i} covered by {len(others)} other answers ({share:.0%}): "
                    f"{kp.text} | most frequent phrases: {culprits[:6]}"
                )
        for i, m in enumerate(q.misconceptions):
            fired = [p for p in m.match if matcher.find(p, own, clause=True) is Hit.MATCH]
            if fired:
                problems.append(f"{q.id} FALSE+ misconception {i} fires on the reference answer via {fired}: {m.claim}")
            if matcher.best(m.match, matcher.tokens(m.claim), clause=True) is not Hit.MATCH:
                problems.append(f"{q.id} DEAF misconception {i} does not match its own claim: {m.claim}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="bank files whose questions to check (default: all)")
    parser.add_argument("--bank", type=Path, default=default_bank_path())
    parser.add_argument("--max-share", type=float, default=0.10)
    args = parser.parse_args()
    problems = check(args.bank, args.files, args.max_share)
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
