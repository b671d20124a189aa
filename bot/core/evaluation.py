"""Agreement between a grader and an expert: Spearman, per-class precision/recall/F1, mean per kind.

Classes follow the expert's lines: correct ≥ 70, partial 35–69, incorrect < 35 (scores out of 100).
Pure functions; ``interview-bot grade-eval`` prints them for a labelled file.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import mean

CLASSES = ("correct", "partial", "incorrect")
CORRECT_KINDS = frozenset({"short", "full", "spoken", "refuting"})  # the blind answers an expert calls correct


def blind_split(question_id: str) -> str:
    """The blind answers' split, fixed before any tuning (tests/fixtures/grader_blind/README.md)."""
    return "test" if zlib.crc32(("blind:" + question_id).encode()) % 4 == 0 else "dev"


def klass(score100: float) -> str:
    if score100 >= 70:
        return "correct"
    return "partial" if score100 >= 35 else "incorrect"


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get average ranks); 0.0 when either side is constant."""
    if len(xs) != len(ys) or len(xs) < 2:
        return 0.0
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = mean(rx), mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx and vy else 0.0


@dataclass(frozen=True, slots=True)
class ClassScore:
    name: str
    precision: float
    recall: float
    f1: float
    support: int


def per_class(expert: Sequence[float], predicted: Sequence[float]) -> list[ClassScore]:
    """Precision, recall and F1 of each class, scores out of 100 on both sides."""
    truth = [klass(x) for x in expert]
    guess = [klass(x) for x in predicted]
    out = []
    for name in CLASSES:
        tp = sum(1 for t, g in zip(truth, guess, strict=True) if t == g == name)
        fp = sum(1 for t, g in zip(truth, guess, strict=True) if g == name and t != name)
        fn = sum(1 for t, g in zip(truth, guess, strict=True) if t == name and g != name)
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out.append(ClassScore(name, p, r, f, tp + fn))
    return out


def macro_f1(scores: Sequence[ClassScore]) -> float:
    present = [s for s in scores if s.support]
    return mean(s.f1 for s in present) if present else 0.0
