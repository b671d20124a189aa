"""Statement helpers: the one dialect-dependent builder (``INSERT … ON CONFLICT`` for SQLite and
PostgreSQL), and the hot paths' way to run prepared Core statements.

Hot paths (every update's inbox row, the chat and user rows, asking and answering) build their
statements once, with bind parameters (:class:`Prepared`), and run them on the session's connection
(:func:`core`), past the ORM's unit of work: building a statement costs ~65 µs and the ORM's
execution path ~65 µs more, against ~35 µs for the prepared statement itself (SQLite, measured on
this project's machine). What they return are plain rows.

On SQLite files (:class:`SqliteSession`) a prepared statement goes one step further: it is compiled
once into its SQL text, its parameters' order and its types' converters (:class:`_Plan`), and runs
on the session's sqlite3 connection directly: ~8 µs against ~26 µs through SQLAlchemy's execution
path (which builds an execution context, a cursor wrapper and a result for every call). The rows
are converted by the same type processors SQLAlchemy would use. A statement the plan cannot run
as is (an expanding ``IN``, a column default computed in Python) keeps SQLAlchemy's path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy import bindparam
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Dialect, Result
from sqlalchemy.exc import DBAPIError

from bot.db.session import Session, SqliteSession

T = TypeVar("T")


def insert_for(session: Session) -> Any:
    """The ``insert`` construct of the session's dialect (both have ``on_conflict_do_nothing`` and
    ``on_conflict_do_update``, ``excluded`` and ``returning``)."""
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


# the SQLite statements made by Prepared (they live as long as the process, so their ids stay
# theirs) → their plans; a statement not made by Prepared is not in it and runs as it is
_plans: dict[int, _Plan | None] = {}


class Prepared:
    """A statement built once per dialect by ``build(insert)`` (``insert``: the dialect's insert
    construct, for ``ON CONFLICT``), with bind parameters for what varies."""

    def __init__(self, build: Callable[[Any], Any]) -> None:
        self._build = build
        self._built: dict[str, Any] = {}

    def __call__(self, session: Session) -> Any:
        dialect = session.get_bind().dialect.name
        statement = self._built.get(dialect)
        if statement is None:
            statement = self._built[dialect] = self._build(insert_for(session))
            if dialect == "sqlite":
                _plans[id(statement)] = None  # compiled at its first run on an inline session
        return statement


class Rows(Protocol):
    """What the hot paths read of a statement's result (SQLAlchemy's ``Result`` is one)."""

    def first(self) -> Any: ...

    def scalar_one(self) -> Any: ...

    def all(self) -> Sequence[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class _Row(tuple[Any, ...]):
    """A result row of a plan: a tuple with ``_mapping`` (column key → value), like SQLAlchemy's."""

    __slots__ = ()
    _keys: tuple[str, ...] = ()

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


class _PlanRows:
    """The rows a plan fetched (all of them, at once: SQLite's rows are local)."""

    def __init__(self, rows: list[_Row]) -> None:
        self._rows = rows

    def first(self) -> _Row | None:
        return self._rows[0] if self._rows else None

    def scalar_one(self) -> Any:
        if len(self._rows) != 1:
            raise ValueError(f"expected one row, got {len(self._rows)}")
        return self._rows[0][0]

    def all(self) -> list[_Row]:
        return self._rows

    def __iter__(self) -> Iterator[_Row]:
        return iter(self._rows)


def _bind_processor(type_: Any, dialect: Dialect) -> Any:
    return type_.dialect_impl(dialect).bind_processor(dialect)


def _result_processor(type_: Any, dialect: Dialect) -> Any:
    return type_.dialect_impl(dialect).result_processor(dialect, None)


class _Plan:
    """A statement compiled once for SQLite: its SQL, the order of its parameters with their
    converters and fixed values, and its result columns with theirs."""

    def __init__(self, statement: Any, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.runnable = not (
            compiled.insert_prefetch
            or compiled.update_prefetch
            or any(b.expanding or b.callable is not None for b in compiled.binds.values())
            or compiled.positiontup is None
        )
        self.sql: str = compiled.string
        names: list[str] = list(compiled.positiontup or ())
        # the types' own converters, through their public API (what SQLAlchemy's execution would use)
        self.params = [(name, _bind_processor(compiled.binds[name].type, dialect)) for name in names]
        self.fixed = {name: b.value for name, b in compiled.binds.items() if not b.required}
        exported = list(getattr(statement, "exported_columns", ()))
        self.row = type("Row", (_Row,), {"__slots__": (), "_keys": tuple(c.key for c in exported)})
        converters = [_result_processor(c.type, dialect) for c in exported]
        self.converters = converters if any(converters) else None

    def run(self, connection: sqlite3.Connection, given: Mapping[str, Any] | None) -> _PlanRows:
        values = {**self.fixed, **given} if given else self.fixed
        params = tuple(values[name] if process is None else process(values[name]) for name, process in self.params)
        try:
            fetched = connection.execute(self.sql, params).fetchall()
        except sqlite3.Error as exc:
            raise DBAPIError.instance(self.sql, params, exc, sqlite3.Error) from exc
        make, converters = self.row, self.converters
        if converters is None:
            return _PlanRows([make(row) for row in fetched])
        return _PlanRows(
            [make(v if c is None else c(v) for v, c in zip(row, converters, strict=True)) for row in fetched]
        )


def binds(*names: str) -> dict[str, Any]:
    """``{name: bindparam(name)}`` for the ``values(...)`` of a prepared INSERT or UPDATE."""
    return {name: bindparam(name) for name in names}


def columns(model: type[Any]) -> list[Any]:
    """Every column of a model, for a prepared SELECT whose rows make :func:`detached` objects."""
    return [getattr(model, column.key) for column in model.__table__.c]


def detached(model: type[T], row: Any) -> T:
    """An ORM object made from a plain row of all its columns (or a mapping of them), in no
    session (for reading; what is set on it is not stored). Its attributes are filled directly,
    without the ORM's per-attribute change events (~5 µs against ~30 µs for a chat row)."""
    values = row if isinstance(row, Mapping) else row._mapping
    made: T = model.__mapper__.class_manager.new_instance()  # type: ignore[attr-defined]
    made.__dict__.update(values)
    return made


async def core(session: Session, statement: Any, params: Mapping[str, Any] | None = None) -> Rows:
    """Run a Core statement on the session's connection, in its transaction, past the ORM (no
    autoflush: flush first if the session holds new objects the statement must see). On SQLite
    files a statement made by a :class:`Prepared` runs as a :class:`_Plan`."""
    if isinstance(session, SqliteSession):
        key = id(statement)
        if key in _plans:
            plan = _plans[key]
            if plan is None:
                plan = _plans[key] = _Plan(statement, session.get_bind().dialect)
            if plan.runnable:
                return plan.run(session.driver(), params)
        result: Result[Any] = session.sync_session.connection().execute(statement, params)
        return result
    found: Result[Any] = await (await session.connection()).execute(statement, params)
    return found
