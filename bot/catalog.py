"""The live bank and its indexes, swapped as one unit when an admin reloads the bank."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.bank import Bank, Question, Topic
from bot.core.grading import matcher_for
from bot.core.search import GlossaryIndex, SearchIndex
from bot.core.text import normalize


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

    def best_match(self, text: str) -> Question | None:
        hits = self.search.search(text, limit=1)
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
    """A mutable reference to the current :class:`Catalog` (reads are a single attribute load)."""

    def __init__(self, catalog: Catalog) -> None:
        self.current = catalog

    def replace(self, bank: Bank) -> Catalog:
        self.current = Catalog.build(bank)
        return self.current
