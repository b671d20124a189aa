"""The live bank's indexes are built after start-up (issue 34): a ``/start`` waiting when the bot
starts needs only the bank, so building the application builds no index; the first use, or the
warm-up once the bot is answering, builds them once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bot.bank import Bank
from bot.catalog import Catalog, CatalogHolder
from bot.config import Settings
from tests.conftest import shipped_bank


def test_the_holder_builds_the_indexes_once_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[int] = []
    real = Catalog.build

    def counting(bank: Bank) -> Catalog:
        built.append(1)
        return real(bank)

    monkeypatch.setattr(Catalog, "build", staticmethod(counting))
    bank = shipped_bank()
    holder = CatalogHolder.of_bank(bank)
    assert holder.bank is bank and built == []
    threads = [threading.Thread(target=holder.prepare) for _ in range(3)]
    for th in threads:
        th.start()
    first = holder.current
    for th in threads:
        th.join()
    assert holder.current is first and first.bank is bank and built == [1]
    assert first.find("kv cache").hits  # a working index


def test_building_the_application_builds_no_index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from bot.tg.app import build_application

    def refuse(bank: Bank) -> Catalog:
        raise AssertionError("Catalog.build at start-up")

    monkeypatch.setattr(Catalog, "build", staticmethod(refuse))
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'b.db'}")
    app = build_application(settings, shipped_bank(), "123456:" + "A" * 35)
    assert app.bot_data["services"].bank.summary()
