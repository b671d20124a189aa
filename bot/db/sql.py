"""The one dialect-dependent statement builder: ``INSERT … ON CONFLICT`` for SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession


def insert_for(session: AsyncSession) -> Any:
    """The ``insert`` construct of the session's dialect (both have ``on_conflict_do_nothing`` and
    ``on_conflict_do_update``, ``excluded`` and ``returning``)."""
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
