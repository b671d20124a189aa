"""Typed access to the services the handlers use, and the per-update state the middleware loads."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from telegram.ext import Application, CallbackContext, ExtBot

from bot.bank import Bank
from bot.catalog import Catalog, CatalogHolder
from bot.config import Settings
from bot.db.engine import Database
from bot.services.deps import Deps
from bot.services.grading import KeywordGrader

if TYPE_CHECKING:
    from bot.db.models import Chat, User
    from bot.metrics import Metrics
    from bot.push.sender import PushService
    from bot.services.voice import VoiceAnswers
    from bot.tg.inbox import Inbox


@dataclass
class Services:
    """The use cases' shared dependencies (``deps``, built once by ``tg/app.py``), the current
    bank with its indexes, and the Telegram side's own state."""

    settings: Settings
    deps: Deps
    catalog_holder: CatalogHolder
    # chat/user ids upserted recently: id -> monotonic time (saves a write per update)
    touched: dict[tuple[int, int], float] = field(default_factory=dict)
    push: PushService | None = None
    metrics: Metrics | None = None
    inbox: Inbox | None = None
    warm_up: asyncio.Task[None] | None = None  # the grader's phrases prepared after start-up
    voice: VoiceAnswers | None = None  # voice answers (None: off)

    @property
    def catalog(self) -> Catalog:
        """The bank with its search and glossary indexes (built on first use after start-up)."""
        return self.catalog_holder.current

    @property
    def bank(self) -> Bank:
        """The current bank, without waiting for its indexes."""
        return self.catalog_holder.bank

    @property
    def db(self) -> Database:
        return self.deps.db

    @property
    def grader(self) -> KeywordGrader:
        return self.deps.grader

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.deps.clock

    @property
    def rng(self) -> random.Random:
        return self.deps.rng

    def recently_touched(self, key: tuple[int, int], ttl: float = 600.0) -> bool:
        now = time.monotonic()
        seen = self.touched.get(key)
        if seen is not None and now - seen < ttl:
            return True
        if len(self.touched) > 50_000:
            self.touched.clear()
        self.touched[key] = now
        return False


class Ctx(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]):
    """The callback context: ``services`` plus what the middleware loaded for this update."""

    def __init__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        chat_id: int | None = None,
        user_id: int | None = None,
    ) -> None:
        super().__init__(application=application, chat_id=chat_id, user_id=user_id)
        self.lang: str = application.bot_data["services"].settings.default_language
        self.chat_row: Chat | None = None
        self.user_row: User | None = None
        self.query_answered = False

    @property
    def services(self) -> Services:
        return cast(Services, self.bot_data["services"])
