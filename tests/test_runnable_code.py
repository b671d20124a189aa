"""Runnable reference code: every fenced ```python block in an item's details whose first line is
``# runnable: numpy`` is self-contained (numpy and the standard library only), ends with asserts,
and runs (docs/bank-format.md, "Runnable code")."""

from __future__ import annotations

import ast
import re
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from bot.bank import Bank, Question
from tests.conftest import shipped_bank

MARK = "# runnable: numpy"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
ALLOWED = frozenset(
    {"numpy", "math", "collections", "itertools", "functools", "heapq", "random", "typing", "dataclasses", "bisect"}
)
SECONDS = 10


def runnable_blocks(q: Question) -> list[str]:
    return [code for code in FENCE.findall(q.details or "") if code.startswith(MARK + "\n")]


def imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def check(qid: str, code: str) -> None:
    """Run one block; fail naming the item when it imports more than numpy, has no assert or raises."""
    tree = ast.parse(code, filename=f"<{qid}>")
    for name in sorted(imported(tree) - ALLOWED):
        pytest.fail(f"{qid}: runnable code imports {name!r}; only numpy and the standard library")
    if not any(isinstance(node, ast.Assert) for node in tree.body):
        pytest.fail(f"{qid}: runnable code must end with asserts that check its result")
    if "numpy" in imported(tree):
        pytest.importorskip("numpy", reason="numpy is a test dependency: pip install -e '.[test]'")

    def timeout(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"ran over {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(SECONDS)
    try:
        exec(compile(tree, f"<{qid}>", "exec"), {"__name__": f"runnable_{qid.replace('-', '_')}"})
    except Exception as exc:  # any failure of the reference code fails the item
        pytest.fail(f"{qid}: runnable code raised {type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def items(bank: Bank) -> Iterator[tuple[str, str]]:
    for q in bank.questions.values():
        for i, code in enumerate(runnable_blocks(q)):
            yield (q.id if i == 0 else f"{q.id}#{i + 1}"), code


BLOCKS = sorted(items(shipped_bank()))


@pytest.mark.parametrize(("qid", "code"), BLOCKS, ids=[qid for qid, _ in BLOCKS])
def test_runnable_reference_code_runs(qid: str, code: str) -> None:
    check(qid, code)


def test_the_coding_tasks_with_numpy_code_are_marked_runnable() -> None:
    marked = {qid.split("#")[0] for qid, _ in BLOCKS}
    assert {"code-12", "code-30"} <= marked
    for q in shipped_bank().questions.values():  # a numpy-only block that is not marked is a forgotten mark
        for code in FENCE.findall(q.details or ""):
            uses = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, re.M))
            if "numpy" in uses and uses <= ALLOWED:
                assert code.startswith(MARK + "\n"), f"{q.id}: numpy-only code without '{MARK}'"


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (f"{MARK}\nfrom collections import Counter\nassert Counter('ab')['a'] == 2\n", "raised AssertionError"),
        (f"{MARK}\nimport torch\nassert True\n", "imports 'torch'"),
        (f"{MARK}\nx = 1\n", "must end with asserts"),
        (f"{MARK}\nx = {{}}['missing']\nassert x\n", "raised KeyError"),
    ],
)
def test_a_broken_block_fails_naming_the_item(code: str, message: str) -> None:
    with pytest.raises(pytest.fail.Exception, match=rf"^code-99: .*{re.escape(message)}"):
        check("code-99", code)
