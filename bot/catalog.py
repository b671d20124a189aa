"""The live bank and its indexes, swapped as one unit when an admin reloads the bank."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bot.bank import Bank, Question, Topic
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
        return cls(bank, SearchIndex(bank), GlossaryIndex(bank), datetime.now(UTC))

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


class CatalogHolder:
    """A mutable reference to the current :class:`Catalog` (reads are a single attribute load)."""

    def __init__(self, catalog: Catalog) -> None:
        self.current = catalog

    def replace(self, bank: Bank) -> Catalog:
        self.current = Catalog.build(bank)
        return self.current
