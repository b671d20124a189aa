"""Durable intake of updates (the transactional inbox).

Long polling: each batch from ``getUpdates`` is stored in the ``inbox`` table (unique on
``update_id``) *before* the next ``getUpdates`` confirms it to Telegram, so kill -9 at any moment
loses nothing: what was stored but not handled is handled after the restart. Webhook: the update
is stored before the 200. An update is marked done once its handler has finished (in batches, by a
background flusher); a redelivered or replayed update that is already stored is not handled twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from telegram import Update
from telegram.error import InvalidToken, TelegramError
from telegram.ext import Application

from bot.db import inbox as inbox_repo
from bot.db.engine import DATABASE_ERRORS, Database, Session
from bot.tg.notices import tell_chat
from bot.tg.transport import RawUpdatesRequest

log = logging.getLogger(__name__)

_HANDOFF_STEPS = 3  # loop turns from the queue to a running handler (fetcher wakes, makes its task, task runs)
ORPHAN_AFTER = timedelta(minutes=2)  # another instance's pending updates are taken over after this


def _touch(path: Path) -> None:
    try:
        path.touch()
    except OSError as exc:  # a health check that fails says why; the bot goes on
        log.debug("cannot touch the heartbeat file %s: %s", path, exc)


class Inbox:
    def __init__(
        self,
        app: Application[Any, Any, Any, Any, Any, Any],
        db: Database,
        clock: Callable[[], datetime],
        *,
        host: str | None = None,
        raw: RawUpdatesRequest | None = None,
    ) -> None:
        self.app = app
        self.raw = raw
        self.db = db
        self.clock = clock
        self.host = host or socket.gethostname()
        self._done: set[int] = set()
        self._told: set[int] = set()  # chats told that the database is down (this outage)
        self._wake = asyncio.Event()
        self._flusher: asyncio.Task[None] | None = None

    # -- intake --------------------------------------------------------------------------------
    async def take(self, updates: Sequence[Update], raw: Mapping[int, Any] | None = None) -> list[Update]:
        """Store the updates (``raw``: their JSON objects as received, by update id; PTB's
        ``to_dict`` otherwise); returns those seen for the first time, in order. Raises the
        database's error when it cannot store them (the caller must not confirm them then)."""
        raw = raw or {}
        rows = [(u.update_id, json.dumps(raw.get(u.update_id) or u.to_dict(), ensure_ascii=False)) for u in updates]
        async with self.db.write() as session:
            fresh = await inbox_repo.store(session, rows, self.host, self.clock())
        return [u for u in updates if u.update_id in fresh]

    async def poll(self, *, wait: int, heartbeat: Path | None = None) -> None:
        """The long-polling loop (runs until cancelled). Errors are one warning line per retry.
        ``heartbeat`` is touched on every round (the container health check reads its age)."""
        await self.app.bot.delete_webhook(drop_pending_updates=False)
        offset: int | None = None
        delay = 1.0
        while True:
            if heartbeat is not None:
                _touch(heartbeat)
            try:
                updates = await self.app.bot.get_updates(offset=offset, timeout=wait, allowed_updates=Update.ALL_TYPES)
                fresh = await self.take(updates, self.raw.raw if self.raw is not None else None) if updates else []
            except InvalidToken:
                raise
            except (TelegramError, SQLAlchemyError, OSError) as exc:
                what = "storing updates" if not isinstance(exc, TelegramError) else "getUpdates"
                log.warning("%s failed (%s: %s); retrying in %.0f s", what, type(exc).__name__, str(exc)[:200], delay)
                if what == "storing updates":  # not confirmed: Telegram keeps them; say they wait
                    await self._tell_waiting(updates)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30.0)
                continue
            delay = 1.0
            self._told.clear()
            if updates:
                offset = updates[-1].update_id + 1  # the next call confirms them: they are stored
            for update in fresh:
                await self.app.update_queue.put(update)
            if fresh:  # let their handlers start (PTB's fetcher, its task) before the next getUpdates
                for _ in range(_HANDOFF_STEPS):  # is built: the reply is then sent sooner
                    await asyncio.sleep(0)

    async def _tell_waiting(self, updates: Sequence[Update]) -> None:
        """Once per chat and outage: the database is down, the message waits and is not lost."""
        default = self.app.bot_data["services"].settings.default_language
        for update in updates:
            chat = update.effective_chat
            if chat is None or chat.id in self._told or update.message is None:
                continue
            self._told.add(chat.id)
            await tell_chat(self.app.bot, update, "db_wait", default)

    async def replay(self) -> int:
        """Queue what was taken but not handled before a stop or a crash; returns how many."""
        async with self.db.read() as session:
            rows = await inbox_repo.pending(session, host=self.host, orphaned_before=self.clock() - ORPHAN_AFTER)
        count = 0
        for update_id, payload in rows:
            try:
                update = Update.de_json(json.loads(payload), self.app.bot)
            except (ValueError, TypeError, KeyError) as exc:
                log.warning("inbox update %s cannot be read again (%s); dropped", update_id, exc)
                self.done(update_id)
                continue
            await self.app.update_queue.put(update)
            count += 1
        if count:
            log.info("handling %d update(s) taken before the last stop", count)
        return count

    # -- done marks ----------------------------------------------------------------------------
    def start(self) -> None:
        self.db.piggyback = self._piggyback
        self._flusher = asyncio.get_running_loop().create_task(self._flush_loop(), name="inbox-flusher")

    async def _piggyback(self, session: Session) -> Callable[[], None] | None:
        """Add the pending done marks to a write transaction that runs anyway."""
        if not self._done:
            return None
        ids, self._done = self._done, set()
        await inbox_repo.mark_done(session, ids, self.clock())

        def undo() -> None:
            self._done |= ids
            self._wake.set()

        return undo

    def done(self, update_id: int) -> None:
        self._done.add(update_id)
        self._wake.set()

    async def _flush(self) -> None:
        if not self._done:
            return
        try:
            async with self.db.write():
                pass  # the piggyback adds the marks
        except DATABASE_ERRORS as exc:  # the undo put them back: try again
            log.warning("could not mark %d update(s) done (%s); retrying", len(self._done), type(exc).__name__)
            await asyncio.sleep(1.0)
            self._wake.set()

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(0.05)  # a write of a handler usually takes them along meanwhile
            await self._flush()

    async def close(self) -> None:
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        await self._flush()
        self.db.piggyback = None
