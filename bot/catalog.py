"""The live bank and its indexes, swapped as one unit when an admin reloads the bank."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.bank import Bank, Question, Topic
from bot.core.grading import matcher_for
from bot.core.search import GlossaryIndex, Hit, SearchIndex
from bot.core.text import normalize


@dataclass(frozen=True, slots=True)
class Found:
    """What a search found: the questions, best first, and the query they answer when it is not the
    one typed (``kvcahe`` → ``KV cache``), for «Показаны результаты для …»."""

    hits: list[Hit]
    corrected: str | None = None


@dataclass(frozen=True, slots=True)
class Catalog:
    bank: Bank
    search: SearchIndex
    glossary: GlossaryIndex
    loaded_at: datetime

    @classmethod
    def build(cls, bank: Bank) -> Catalog:
        catalog = cls(bank, SearchIndex(bank), GlossaryIndex(bank), datetime.now(UTC))
        matcher_for(bank.lexicon)  # the grader's lexicon and Russian dictionaries, before the first answer
        release_free_memory()  # building a large index leaves freed blocks the OS can have back
        return catalog

    def find_topic(self, text: str) -> Topic | None:
        """A topic by id or title in either language (case-insensitive)."""
        wanted = normalize(text).strip()
        for topic in self.bank.topics:
            names = (topic.id, topic.title_ru, topic.title_en)
            if wanted in (normalize(n) for n in names):
                return topic
        return None

    def find(self, text: str, limit: int = 50) -> Found:
        """The questions a query means: as typed when they match most of its words; else with each
        mistyped word spelled as the bank spells it (``kv cahce``); else the glossary term the query
        names, as /glossary finds it despite typos (``kvcahe``). Nothing when none of these is sure
        (``квантовая гравитация`` is not a LoRA question)."""
        hits = self.search.search(text, limit=limit)
        if hits and hits[0].sure:
            return Found(hits)
        matches = self.glossary.offered(self.glossary.lookup(text, limit=3))
        if matches and matches[0].resemblance >= self.glossary.RESEMBLES:
            name = matches[0].term.term_en
            named = [h for h in self.search.search(name, limit=limit) if h.sure]
            if named:
                return Found(named, name)
        words = text.split()
        fixed = [self.search.spelled(w) for w in words]
        if fixed != words:
            again = self.search.search(" ".join(fixed), limit=limit)
            if again and again[0].sure:
                return Found(again, " ".join(fixed))
        return Found([])

    def best_match(self, text: str) -> Question | None:
        hits = self.find(text, limit=1).hits
        return self.bank.question(hits[0].question_id) if hits else None


def release_free_memory() -> None:
    """gc, then glibc's malloc_trim: return freed heap pages to the OS (no-op elsewhere)."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class CatalogHolder:
    """A mutable reference to the current :class:`Catalog`. Built lazily from a bank
    (:meth:`of_bank`): the indexes and the grader's dictionaries (~0.4 s) are built on first use or by
    :meth:`prepare` once the bot is answering, so a ``/start`` waiting at start-up, which needs only the
    bank, does not wait for them. Reads of a built catalog are an attribute load and a None check."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog: Catalog | None = catalog
        self._bank = catalog.bank
        self._lock = threading.Lock()

    @classmethod
    def of_bank(cls, bank: Bank) -> CatalogHolder:
        holder = cls.__new__(cls)
        holder._catalog = None
        holder._bank = bank
        holder._lock = threading.Lock()
        return holder

    @property
    def bank(self) -> Bank:
        """The current bank, without building its indexes."""
        return self._bank

    @property
    def current(self) -> Catalog:
        catalog = self._catalog
        return catalog if catalog is not None else self.prepare()

    def prepare(self) -> Catalog:
        """Build the indexes now if they are not built yet (safe from a worker thread: built once)."""
        with self._lock:
            if self._catalog is None:
                self._catalog = Catalog.build(self._bank)
            return self._catalog

    def replace(self, bank: Bank) -> Catalog:
        catalog = Catalog.build(bank)
        with self._lock:
            self._catalog, self._bank = catalog, bank
        return catalog
