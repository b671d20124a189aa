"""Prototypes of the fixes proposed in bench/README.md, used only to measure their gain in the same
run as the current code (``--with-proposals`` in the benchmarks). Nothing in bot/ imports this.

Each prototype keeps the behaviour of the code it stands in for:

- :class:`ProtoDatabase`: SQLite reads run inline on the event-loop thread through a tiny
  awaitable wrapper around ``sqlite3`` (SQLAlchemy dialect ``sqlite+inlinesqlite``) instead of
  aiosqlite's worker thread (4 thread hand-offs per statement); writes keep aiosqlite, the
  ``BEGIN IMMEDIATE`` and the in-process write lock (``inline_writes=True`` moves them too).
- :func:`load_update_state`: the middleware loads the chat and the user with one Core SELECT (outer
  join) into plain records instead of two ORM ``session.get`` calls.
- :func:`candidates_for` / :func:`pick`: candidate lists are computed once per (bank, topic) and the
  least-seen slow path runs in C (map/min/compress).
- :class:`FastSearchIndex`: the BM25 weight of each posting is precomputed (tf and document length
  never change), and only the top ``limit`` hits are built (heapq) — same ranking, checked.
- :class:`FastGlossaryIndex`: the names are run through rapidfuzz's ``default_process`` once at
  build time, not on every lookup — same scores, checked.
- :func:`sniffio_shim`: stands in for adding ``sniffio`` to the dependencies (httpcore imports it on
  every request and the failed import searches sys.path each time).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import random
import sqlite3
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import SimpleNamespace
from typing import Any

# -- inline SQLite driver ---------------------------------------------------------------------------


class _InlineCursor:
    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._c = cursor

    async def __aenter__(self) -> _InlineCursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._c.close()

    @property
    def description(self) -> Any:
        return self._c.description

    @property
    def rowcount(self) -> int:
        return self._c.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._c.lastrowid

    @property
    def arraysize(self) -> int:
        return self._c.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._c.arraysize = value

    async def execute(self, sql: str, parameters: Any = ()) -> _InlineCursor:
        self._c.execute(sql, parameters)
        return self

    async def executemany(self, sql: str, seq: Iterable[Any]) -> _InlineCursor:
        self._c.executemany(sql, seq)
        return self

    async def fetchone(self) -> Any:
        return self._c.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._c.fetchmany(size) if size else self._c.fetchmany()

    async def fetchall(self) -> list[Any]:
        return self._c.fetchall()

    async def close(self) -> None:
        self._c.close()


class _Tx:
    """Stands in for aiosqlite's request queue (SQLAlchemy's isolation_level setter uses it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def put_nowait(self, item: tuple[asyncio.Future[Any], Any]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as exc:  # pragma: no cover
            future.set_exception(exc)


class InlineConnection:
    daemon = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["check_same_thread"] = False
        self._conn = sqlite3.connect(*args, **kwargs)
        self._connection = self._conn
        self._tx = _Tx(self._conn)
        self._thread = types.SimpleNamespace(daemon=True)

    def __await__(self) -> Iterator[Any]:
        return self
        yield  # pragma: no cover

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    def cursor(self) -> _InlineCursor:
        return _InlineCursor(self._conn.cursor())

    async def execute(self, sql: str, parameters: Any = ()) -> _InlineCursor:
        return _InlineCursor(self._conn.execute(sql, parameters))

    async def commit(self) -> None:
        self._conn.commit()

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        if self._connection is not None:
            self._conn.close()
            self._connection = None

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        self._conn.create_function(*args, **kwargs)

    def stop(self) -> None:
        self._conn.close()


inline_module = types.ModuleType("inline_aiosqlite")
inline_module.connect = InlineConnection  # type: ignore[attr-defined]
inline_module.Connection = InlineConnection  # type: ignore[attr-defined]
inline_module.__version__ = "0.0-inline"  # type: ignore[attr-defined]
for _name in (
    "DatabaseError",
    "Error",
    "IntegrityError",
    "NotSupportedError",
    "OperationalError",
    "ProgrammingError",
    "sqlite_version",
    "sqlite_version_info",
):
    setattr(inline_module, _name, getattr(sqlite3, _name))


def _register_dialect() -> None:
    from sqlalchemy.dialects import registry
    from sqlalchemy.dialects.sqlite.aiosqlite import AsyncAdapt_aiosqlite_dbapi, SQLiteDialect_aiosqlite

    class InlineSQLiteDialect(SQLiteDialect_aiosqlite):
        driver = "inlinesqlite"
        supports_statement_cache = True

        @classmethod
        def import_dbapi(cls) -> Any:
            return AsyncAdapt_aiosqlite_dbapi(inline_module, sqlite3)

    globals()["InlineSQLiteDialect"] = InlineSQLiteDialect
    registry.register("sqlite.inlinesqlite", __name__, "InlineSQLiteDialect")


def make_proto_database(url: str, *, inline_writes: bool = False) -> Any:
    """A bot.db.engine.Database whose SQLite reads (and optionally writes) run inline."""
    from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

    from bot.config import async_database_url
    from bot.db.engine import Database, _setup_sqlite

    _register_dialect()

    class ProtoDatabase(Database):
        def __init__(self, url: str) -> None:
            super().__init__(url)
            if not self.is_sqlite:
                return
            inline_url = self.url.replace("sqlite+aiosqlite://", "sqlite+inlinesqlite://", 1)
            self.inline_engine = create_async_engine(inline_url)
            _setup_sqlite(self.inline_engine)
            self._read = async_sessionmaker(self.inline_engine, expire_on_commit=False)
            if inline_writes:
                writer = self.inline_engine.execution_options(sqlite_begin="IMMEDIATE")
                self._write = async_sessionmaker(writer, expire_on_commit=False)

        async def close(self) -> None:
            if self.is_sqlite:
                await self.inline_engine.dispose()
            await super().close()

    return ProtoDatabase(async_database_url(url))


# -- the middleware in one query ------------------------------------------------------------------
async def load_update_state(update: Any, context: Any) -> None:
    """bot.tg.common.load_update_state with the chat and the user loaded by one Core SELECT into
    plain mutable records (no ORM identity map, no second statement)."""
    from sqlalchemy import literal, select
    from telegram.constants import ChatType

    from bot.db.models import Chat, User
    from bot.i18n import language_from_telegram
    from bot.tg.common import _KINDS, _upsert

    s = context.services
    if s.metrics is not None:
        kind = next((k for k in _KINDS if getattr(update, k, None) is not None), "other")
        s.metrics.updates.labels(kind=kind).inc()
    chat, user = update.effective_chat, update.effective_user
    if chat is None:
        return
    key = (chat.id, user.id if user else 0)
    fresh = not s.recently_touched(key)
    if fresh:
        await _upsert(s, chat, user)

    chats, users = Chat.__table__, User.__table__
    n_chat = len(chats.c)

    async def load() -> None:
        async with s.db.read() as session:
            stmt = select(chats, users).select_from(
                chats.outerjoin(users, users.c.id == literal(user.id if user else -1))
            )
            row = (await session.execute(stmt.where(chats.c.id == chat.id))).first()
        if row is None:
            context.chat_row = context.user_row = None
            return
        context.chat_row = SimpleNamespace(**dict(zip(chats.c.keys(), row[:n_chat], strict=True)))
        has_user = row[n_chat] is not None
        context.user_row = SimpleNamespace(**dict(zip(users.c.keys(), row[n_chat:], strict=True))) if has_user else None

    await load()
    missing = context.chat_row is None or (user is not None and not user.is_bot and context.user_row is None)
    if missing and not fresh:
        await _upsert(s, chat, user)
        await load()
    default = s.settings.default_language
    if chat.type == ChatType.PRIVATE:
        chosen = context.user_row.language if context.user_row else None
        context.lang = chosen or language_from_telegram(user.language_code if user else None, default)
    else:
        chosen = context.chat_row.language if context.chat_row else None
        context.lang = chosen or default


# -- grading ----------------------------------------------------------------------------------------
# The proposal that cached phrase keys for bot.core.grading._covers is gone: issue 12 rewrote the
# grader around indexed phrase matching (bot/core/matching.py), which does the same and more.

# -- picking ------------------------------------------------------------------------------------------
_candidates: dict[tuple[int, str | None, bool], tuple[str, ...]] = {}


def candidates_for(bank: Any, topic: str | None, *, include_tasks: bool = False) -> Sequence[str]:
    """bot.core.picking.candidates_for, computed once per (bank, topic) — the bank is immutable
    (the real fix: a dict built in Bank.__init__ or Catalog.build)."""
    key = (id(bank), topic, include_tasks)
    found = _candidates.get(key)
    if found is None:
        ids = bank.topic_question_ids(topic) if topic else tuple(bank.questions)
        qs = bank.questions
        found = tuple(ids) if include_tasks else tuple(q for q in ids if qs[q].kind == "question")
        _candidates[key] = found
    return found


_TRIES = 24


def pick(candidates: Sequence[str], seen: Mapping[str, int], rng: random.Random) -> str | None:
    """bot.core.picking.pick with the slow path in C: same distribution (uniform among the
    least-seen candidates)."""
    if not candidates:
        return None
    if len(seen) < len(candidates):
        for _ in range(_TRIES):
            choice = candidates[rng.randrange(len(candidates))]
            if seen.get(choice, 0) == 0:
                return choice
    counts = list(map(seen.get, candidates, itertools.repeat(0)))
    least = min(counts)
    pool = list(itertools.compress(candidates, map(least.__eq__, counts)))
    return pool[rng.randrange(len(pool))]


# -- search -----------------------------------------------------------------------------------------
class FastSearchIndex:
    """bot.core.search.SearchIndex with precomputed BM25 weights and a top-k heap."""

    def __init__(self, bank: Any) -> None:
        from bot.core.search import SearchIndex

        base = SearchIndex(bank)
        self._ids = base._ids
        self._vocab = base._vocab
        self._base = base
        avg, lengths = base._avg, base._lengths
        k1, b = 1.2, 0.75
        # norm(tf) is increasing in tf for a given document, so max-then-norm == norm-then-max
        self._weights: dict[str, dict[int, float]] = {
            key: {doc: tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[doc] / avg)) for doc, tf in post.items()}
            for key, post in base._postings.items()
        }
        base._postings = {}  # free the raw tf (the prototype keeps only the weights)

    def _expand(self, key: str) -> list[str]:
        from bot.core.text import PREFIX_MIN

        if len(key) < PREFIX_MIN:
            return [key] if key in self._weights else []
        import bisect

        found = []
        i = bisect.bisect_left(self._vocab, key)
        while i < len(self._vocab) and self._vocab[i].startswith(key):
            found.append(self._vocab[i])
            i += 1
        for n in range(PREFIX_MIN, len(key)):
            if key[:n] in self._weights:
                found.append(key[:n])
        return found

    def search(self, query: str, limit: int = 50, within: Iterable[str] | None = None) -> list[Any]:
        from bot.core.search import Hit
        from bot.core.text import keys

        query_keys = list(dict.fromkeys(keys(query)))
        if not query_keys or not self._ids:
            return []
        n_docs = len(self._ids)
        scores: dict[int, float] = {}
        matched: dict[int, int] = {}
        for qk in query_keys:
            expanded = self._expand(qk)
            if not expanded:
                continue
            if len(expanded) == 1:
                hit_docs = self._weights[expanded[0]]
            else:
                hit_docs = dict(self._weights[expanded[0]])
                for key in expanded[1:]:
                    for doc, w in self._weights[key].items():
                        if w > hit_docs.get(doc, 0.0):
                            hit_docs[doc] = w
            idf = math.log(1 + (n_docs - len(hit_docs) + 0.5) / (len(hit_docs) + 0.5))
            get = scores.get
            for doc, w in hit_docs.items():
                scores[doc] = get(doc, 0.0) + idf * w
            mget = matched.get
            for doc in hit_docs:
                matched[doc] = mget(doc, 0) + 1
        allowed = None if within is None else set(within)
        n_keys = len(query_keys)
        ids = self._ids
        candidates = (
            (score * (matched[doc] / n_keys), ids[doc])
            for doc, score in scores.items()
            if allowed is None or ids[doc] in allowed
        )
        top = heapq.nsmallest(limit, candidates, key=lambda h: (-h[0], h[1]))
        return [Hit(qid, score) for score, qid in top]


# -- glossary -----------------------------------------------------------------------------------------
class FastGlossaryIndex:
    """bot.core.search.GlossaryIndex with the names preprocessed once."""

    SURE = 88.0

    def __init__(self, bank: Any) -> None:
        from rapidfuzz import utils

        from bot.core.search import GlossaryIndex

        base = GlossaryIndex(bank)
        self._names, self._terms, self._normalized = base._names, base._terms, base._normalized
        self._processed = [utils.default_process(n) for n in self._normalized]
        self.is_sure = base.is_sure

    def lookup(self, text: str, limit: int = 5) -> list[Any]:
        from rapidfuzz import fuzz, process, utils

        from bot.core.search import TermMatch
        from bot.core.text import normalize

        query = normalize(text).strip()
        if not query:
            return []
        results = process.extract(
            utils.default_process(query),
            self._processed,
            scorer=fuzz.WRatio,
            processor=None,
            limit=limit * 4,
            score_cutoff=55,
        )
        best: dict[str, Any] = {}
        for _, score, idx in results:
            term = self._terms[idx]
            value = 100.0 if self._normalized[idx] == query else float(score)
            if term.id not in best or best[term.id].score < value:
                best[term.id] = TermMatch(term, value, self._names[idx])
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.term.term_en.casefold()))
        return ranked[:limit]


# -- httpcore's failed import on every request ---------------------------------------------------------
def sniffio_shim() -> None:
    """httpcore calls ``import sniffio`` for every lock/event it creates; sniffio is not installed
    (anyio 4.16 and httpcore 1.0.9 no longer require it), so every call searches sys.path and fails
    (~55 failed imports per update). The fix is one line in pyproject.toml: depend on ``sniffio``.
    This shim stands in for the installed package (the bot only runs on asyncio)."""
    import sys

    try:
        import sniffio  # noqa: F401
    except ImportError:
        shim = types.ModuleType("sniffio")
        shim.current_async_library = lambda: "asyncio"  # type: ignore[attr-defined]
        sys.modules["sniffio"] = shim


# -- applying them (bench only) -------------------------------------------------------------------------
@contextlib.contextmanager
def applied(*, inline_writes: bool = False) -> Iterator[None]:
    """Patch the proposals into the imported bot modules; undo on exit."""
    import bot.catalog
    import bot.push.sender
    import bot.services.asking
    import bot.tg.app

    patches = [
        (bot.tg.app, "Database", lambda url: make_proto_database(url, inline_writes=inline_writes)),
        (bot.tg.app, "load_update_state", load_update_state),
        (bot.services.asking, "candidates_for", candidates_for),
        (bot.services.asking, "pick", pick),
        (bot.push.sender, "candidates_for", candidates_for),
        (bot.push.sender, "pick", pick),
        (bot.catalog, "SearchIndex", FastSearchIndex),
        (bot.catalog, "GlossaryIndex", FastGlossaryIndex),
    ]
    sniffio_shim()
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, value in patches:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)
