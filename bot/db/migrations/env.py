"""Alembic environment: runs on a connection handed in by :mod:`bot.db.engine`, or on DATABASE_URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from bot.db.models import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from bot.config import load_settings
    from bot.db.engine import run_in_transaction

    run_in_transaction(load_settings().database_url, _run)


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; run `interview-bot migrate`")
run_migrations_online()
