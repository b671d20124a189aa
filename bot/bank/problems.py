"""What a bank's validation reports: problems at ``file:line``, and the error that lists them all."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


class BankError(Exception):
    """The bank is invalid; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line, p.message))
        super().__init__(self.report())

    def __reduce__(self) -> tuple[type[BankError], tuple[list[Problem]]]:
        return (BankError, (self.problems,))  # picklable across processes

    def report(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.append(f"{len(self.problems)} problem(s) found; the bank was not loaded.")
        return "\n".join(lines)
