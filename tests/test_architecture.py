"""The import rules between the packages of ``bot/``, read from the source (every import counts,
inside functions and ``TYPE_CHECKING`` blocks too):

- ``bot.bank``, ``bot.core`` and ``bot.services`` import nothing from ``telegram`` or ``bot.tg``;
- ``bot.push`` imports nothing from ``telegram`` or ``bot.tg`` (it sends through ``PushChannel``);
- no module under ``bot.tg`` imports ``bot.tg.app`` (the composition root is imported only from the
  entry points, e.g. ``bot.cli``);
- the packages (``bot.core``, ``bot.db``, ``bot.tg``, ...) and top-level modules (``bot.cli``,
  ``bot.config``, ...) import each other without cycles, and so do the modules;
- SQL is written only in ``bot.db``: elsewhere ``sqlalchemy`` is imported for its exception types
  (``sqlalchemy.exc``) and nothing else; a session's type comes from ``bot.db.engine``.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "bot"

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "bot.bank": ("telegram", "bot.tg"),
    "bot.core": ("telegram", "bot.tg"),
    "bot.services": ("telegram", "bot.tg"),
    "bot.push": ("telegram", "bot.tg"),
}

DATA_LAYER = "bot.db"
SQL_OUTSIDE_DATA_LAYER = ("sqlalchemy.exc",)  # what other packages may take from sqlalchemy


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. bot.push.sender
    target: str  # the imported module, e.g. bot.tg.views
    line: int
    path: str = ""

    def __str__(self) -> str:
        return f"{self.path or self.module}:{self.line}: {self.module} imports {self.target}"


@functools.cache
def _parse(source: str) -> ast.Module:
    """A module's tree, parsed once for all the tests here (each walks every module of ``bot/``)."""
    return ast.parse(source)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def parse_imports(source: str, module: str, is_package: bool, known: set[str], path: str = "") -> list[Import]:
    """Every import in ``source`` (of ``module``), relative ones resolved; ``from a import b``
    names ``a.b`` when that is a module of ours, else ``a``."""
    found: list[Import] = []
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno, path) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append(Import(module, full if full in known else base, node.lineno, path))
    return list(dict.fromkeys(found))  # `from x import a, b` is one import of x


@functools.cache
def all_imports(root: Path = BOT) -> list[Import]:
    files = {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    known = set(files)
    imports: list[Import] = []
    for name, path in files.items():
        source = path.read_text(encoding="utf-8")
        where = str(path.relative_to(root.parent))
        imports += parse_imports(source, name, path.name == "__init__.py", known, where)
    return imports


def unit(module: str) -> str:
    """The package (or top-level module) a module belongs to: bot.tg.handlers.quiz → bot.tg."""
    return ".".join(module.split(".")[:2])


def layer_violations(imports: Iterable[Import]) -> list[str]:
    bad = []
    for imp in imports:
        for package, banned in FORBIDDEN.items():
            if _within(imp.module, package) and any(_within(imp.target, b) for b in banned):
                bad.append(f"{imp} (forbidden in {package})")
        if _within(imp.module, "bot.tg") and imp.module != "bot.tg.app" and _within(imp.target, "bot.tg.app"):
            bad.append(f"{imp} (only the entry points import the composition root)")
    return bad


def sql_violations(imports: Iterable[Import]) -> list[str]:
    """Imports of sqlalchemy (statements, sessions, dialects, ...) outside the data layer."""
    return [
        f"{imp} (SQL belongs in {DATA_LAYER}; elsewhere only {', '.join(SQL_OUTSIDE_DATA_LAYER)})"
        for imp in imports
        if not _within(imp.module, DATA_LAYER)
        and _within(imp.target, "sqlalchemy")
        and not any(_within(imp.target, allowed) for allowed in SQL_OUTSIDE_DATA_LAYER)
    ]


def package_cycles(imports: Iterable[Import], unit: Callable[[str], str] = unit) -> list[str]:
    """Each cycle between units (packages by default; pass ``unit=str`` for modules), as
    'a → b → a' with the imports that make each step."""
    edges: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in imports:
        src, dst = unit(imp.module), unit(imp.target)
        if dst.startswith("bot.") and src != dst:
            edges[src][dst].append(imp)
    cycles: list[str] = []
    seen: set[frozenset[str]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, {})):
            if nxt == start:
                ring = [*path, start]
                key = frozenset(ring)
                if key not in seen:
                    seen.add(key)
                    steps = "; ".join(str(edges[a][b][0]) for a, b in pairwise(ring))
                    cycles.append(f"{' → '.join(ring)}: {steps}")
            elif nxt not in path and nxt > start:  # each cycle once, from its smallest unit
                walk(start, nxt, [*path, nxt])

    for start in sorted(edges):
        walk(start, start, [start])
    return cycles


def test_layers_import_only_what_they_may() -> None:
    bad = layer_violations(all_imports())
    assert not bad, "forbidden imports:\n" + "\n".join(bad)


def test_sql_stays_in_the_data_layer() -> None:
    bad = sql_violations(all_imports())
    assert not bad, "sqlalchemy imported outside bot.db:\n" + "\n".join(bad)


def test_no_import_cycles_between_packages() -> None:
    cycles = package_cycles(all_imports())
    assert not cycles, "import cycles between packages:\n" + "\n".join(cycles)


def test_no_import_cycles_between_modules() -> None:
    """Not even one hidden in a function or a ``TYPE_CHECKING`` block: a cycle means two modules
    that can only be understood (and changed) together."""
    cycles = package_cycles(all_imports(), unit=str)
    assert not cycles, "import cycles between modules:\n" + "\n".join(cycles)


def test_the_source_is_read() -> None:
    imports = all_imports()
    assert any(i.module == "bot.tg.app" and i.target == "bot.push.sender" for i in imports)
    assert len({i.module for i in imports}) > 50


# -- the checks can fail ---------------------------------------------------------------------------


def _imports(module: str, source: str, known: Iterable[str] = ()) -> list[Import]:
    return parse_imports(source, module, False, set(known))


@pytest.mark.parametrize(
    ("module", "source", "culprit"),
    [
        ("bot.core.quiz", "import telegram\n", "telegram"),
        ("bot.services.answers", "def f():\n    from telegram.error import Forbidden\n", "telegram.error"),
        ("bot.push.sender", "def f():\n    from bot.tg.views import question_view\n", "bot.tg.views"),
        ("bot.bank.model", "from ..tg import views\n", "bot.tg"),
        ("bot.tg.handlers.admin", "def f():\n    from bot.tg.app import on_unknown_command\n", "bot.tg.app"),
    ],
)
def test_a_forbidden_import_is_reported(module: str, source: str, culprit: str) -> None:
    (problem,) = layer_violations(_imports(module, source))
    assert module in problem and f"imports {culprit}" in problem


def test_an_import_cycle_is_reported() -> None:
    imports = _imports("bot.db.chats", "from bot.core import text\n") + _imports(
        "bot.core.text", "def f():\n    from bot.db import chats\n", known=["bot.db.chats"]
    )
    (cycle,) = package_cycles(imports)
    assert cycle.startswith("bot.core → bot.db → bot.core")
    assert "bot.core.text" in cycle and "imports bot.db.chats" in cycle


@pytest.mark.parametrize(
    ("module", "source", "culprit"),
    [
        ("bot.services.answers", "from sqlalchemy import update\n", "sqlalchemy"),
        ("bot.push.planner", "from sqlalchemy.dialects.sqlite import insert\n", "sqlalchemy.dialects.sqlite"),
        ("bot.tg.inbox", "from sqlalchemy.ext.asyncio import AsyncSession\n", "sqlalchemy.ext.asyncio"),
        ("bot.tg.handlers.admin", "def f():\n    import sqlalchemy as sa\n", "sqlalchemy"),
        ("bot.terminal", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sqlalchemy.orm\n",
         "sqlalchemy.orm"),
    ],
)  # fmt: skip
def test_sql_outside_the_data_layer_is_reported(module: str, source: str, culprit: str) -> None:
    (problem,) = sql_violations(_imports(module, source))
    assert module in problem and f"imports {culprit}" in problem


def test_the_data_layer_and_exception_types_may_use_sqlalchemy() -> None:
    imports = _imports("bot.db.chats", "from sqlalchemy import select\n") + _imports(
        "bot.tg.app", "from sqlalchemy.exc import DBAPIError\nimport sqlalchemy.exc\n"
    )
    assert sql_violations(imports) == []


# -- other libraries' internals ----------------------------------------------------------------------

THIRD_PARTY = ("telegram", "sqlalchemy", "aiohttp")
# private names of other libraries a review once found used here; never again, whatever the object
KNOWN_PRIVATE = frozenset(
    {
        "_proxied",
        "_bind_processors",
        "_result_columns",
        "_cached_result_processor",
        "_group_limiters",
        "_run_request",
        "_retry_after",
        "_utils",
        "_SubParsersAction",
    }
)


def private_uses(sources: dict[str, str]) -> list[str]:
    """Reaches into other libraries' internals: an import of a ``_private`` module or name of
    ``telegram``, ``sqlalchemy`` or ``aiohttp``; an attribute ``x._name`` that no code of ours
    defines (so it belongs to another library's object) or that is on the known list."""
    trees = {where: _parse(src) for where, src in sources.items()}
    ours: set[str] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                ours.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                ours.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                ours.add(node.attr)
            elif isinstance(node, ast.arg):
                ours.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_"):
                ours.add(node.value)  # __slots__ entries
    bad: list[str] = []
    for where, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
                for m in modules:
                    private = [p for p in [*m.split("."), *names] if p.startswith("_") and not p.startswith("__")]
                    if m.split(".")[0] in THIRD_PARTY and private:
                        bad.append(f"{where}:{node.lineno}: imports {m} ({', '.join(private)})")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in KNOWN_PRIVATE:
                bad.append(f"{where}:{node.lineno}: overrides another library's private hook {node.name}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and (node.attr in KNOWN_PRIVATE or node.attr not in ours)
            ):
                bad.append(f"{where}:{node.lineno}: reads another library's private attribute {node.attr}")
    return bad


def test_no_other_librarys_internals_are_used() -> None:
    sources = {str(p.relative_to(BOT.parent)): p.read_text(encoding="utf-8") for p in sorted(BOT.rglob("*.py"))}
    bad = private_uses(sources)
    assert not bad, "private internals of other libraries:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "culprit"),
    [
        ("from telegram._utils.types import ODVInput\n", "telegram._utils.types"),
        ("from sqlalchemy.engine import _row\n", "_row"),
        ("def f(limiter):\n    return limiter._group_limiters\n", "_group_limiters"),
        ("def f(exc):\n    return exc._retry_after\n", "_retry_after"),
        ("def f(session):\n    return session._some_internal_state\n", "_some_internal_state"),
        ("class S:\n    @property\n    def _proxied(self):\n        return 1\n", "_proxied"),
    ],
)
def test_a_private_internal_is_reported(source: str, culprit: str) -> None:
    (found,) = private_uses({"bot/x.py": source})
    assert culprit in found and found.startswith("bot/x.py:")


def test_our_own_private_names_are_fine() -> None:
    source = "class A:\n    __slots__ = ('_c',)\n    def __init__(self):\n        self._n = 1\n    def f(self, o):\n        return o._n, self._c\n"
    assert private_uses({"bot/x.py": source}) == []


def test_a_cycle_between_modules_of_one_package_is_reported() -> None:
    imports = _imports("bot.tg.common", "from bot.tg import context\n", known=["bot.tg.context"]) + _imports(
        "bot.tg.context",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from bot.tg.common import x\n",
        known=["bot.tg.common"],
    )
    assert package_cycles(imports) == []  # one package
    (cycle,) = package_cycles(imports, unit=str)
    assert cycle.startswith("bot.tg.common → bot.tg.context → bot.tg.common")


# Issue 31: a newcomer reads a module in one sitting and a function on one screen. Alembic's revision
# files are history (an applied migration is never edited), so they are left as written.
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 7


def _shape_problems(path: Path, source: str) -> list[str]:
    where = path.relative_to(BOT.parent) if path.is_absolute() else path
    problems = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        problems.append(f"{where}: {lines} lines")
    for node in ast.walk(_parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length > MAX_FUNCTION_LINES:
            problems.append(f"{where}:{node.lineno} {node.name}: {length} lines")
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs] + [p for p in (a.vararg, a.kwarg) if p]
        if params and params[0].arg in ("self", "cls"):
            params = params[1:]
        if len(params) > MAX_PARAMETERS:
            problems.append(f"{where}:{node.lineno} {node.name}: {len(params)} parameters")
    return problems


def test_modules_and_functions_stay_small() -> None:
    problems = [
        p
        for path in sorted(BOT.rglob("*.py"))
        if "migrations" not in path.parts
        for p in _shape_problems(path, path.read_text(encoding="utf-8"))
    ]
    assert not problems, "\n".join(problems)


def test_a_long_function_and_a_wide_one_are_reported() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    source = f"def long():\n{body}\n\ndef wide(self, a, b, c, d, e, f, g, h):\n    pass\n"
    problems = _shape_problems(Path("bot/x.py"), source)
    assert any("long: 62 lines" in p for p in problems) and any("wide: 8 parameters" in p for p in problems)
