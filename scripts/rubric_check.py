"""Check a bank's rubric against the bank's own correct texts (see bot/core/consistency.py).

    python scripts/rubric_check.py [FILE ...] [--bank PATH] [--max-share 0.10]

For every question of the given bank files (all files when none is given) it reports:

- CHARGE    a misconception asserted by a correct text of the bank (the card, the details and their code
            comments, a follow-up's answer) of the question itself or of another question of its topic,
            with the sentence and the predicate phrases that fired;
- REVERSED  a key point stated the other way round by such a text;
- DEAF      a misconception not found in its own claim text (it can never fire);
- UNCOVERED a key point its own reference answer does not cover;
- GENERIC   a key point covered by more than --max-share of the OTHER questions' reference answers.

Exit code 1 when anything is reported. The same checks run in tests/test_rubric.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.bank import default_bank_path, load_bank
from bot.core import consistency
from bot.core.grading import matcher_for
from bot.core.matching import Hit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="bank files whose questions to check (default: all)")
    parser.add_argument("--bank", type=Path, default=default_bank_path())
    parser.add_argument("--max-share", type=float, default=0.10)
    args = parser.parse_args()
    bank = load_bank(args.bank)
    matcher = matcher_for(bank.lexicon)
    wanted = {str(Path(f).resolve()) for f in args.files}
    questions = [
        q
        for q in bank.questions.values()
        if not wanted or (q.where is not None and str(Path(q.where.file).resolve()) in wanted)
    ]
    problems: list[str] = []
    for p in consistency.check(bank, [q.id for q in questions]):
        q = bank.questions[p.question]
        extra = f" via {consistency.fired(q, p.kind, p.index, p.sentence, matcher)}" if p.kind != "deaf" else ""
        problems.append(f"{p}{extra}")
    answers = {q.id: matcher.tokens(q.answer) for q in bank.questions.values()}
    for q in questions:
        for i, kp in enumerate(q.key_points):
            if matcher.best(kp.match, answers[q.id]) is not Hit.MATCH:
                problems.append(f"{q.id} UNCOVERED key point {i}: {kp.text}")
            others = [o for o in answers if o != q.id and matcher.best(kp.match, answers[o]) is Hit.MATCH]
            share = len(others) / max(1, len(answers) - 1)
            if share > args.max_share:
                culprits = [p for p in kp.match if sum(matcher.find(p, answers[o]) is Hit.MATCH for o in others) > 2]
                problems.append(
                    f"{q.id} GENERIC key point {i} covered by {len(others)} other answers ({share:.0%}): "
                    f"{kp.text} | most frequent phrases: {culprits[:6]}"
                )
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
