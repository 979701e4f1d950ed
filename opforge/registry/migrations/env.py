"""Alembic environment for the registry.

Normally driven by registry.db.migrate(), which passes an open connection
(inside a locked transaction) through config.attributes. The fallback paths
let the stock `alembic` command work too, e.g. to write a new revision with
`alembic -c registry/alembic.ini revision -m "..."`.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from opforge.registry.db import make_engine, migration_connection
from opforge.registry.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode recreates tables instead.
        render_as_batch=True,
        # pysqlite with isolation_level=None (see registry.db) does run DDL
        # transactionally, unlike alembic's default assumption for SQLite.
        transactional_ddl=True,
    )


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        render_as_batch=True,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    prefix = "sqlite:///"
    if url is None or not url.startswith(prefix):
        raise RuntimeError(f"registry migrations need a sqlite:/// url, got {url!r}")
    engine = make_engine(url[len(prefix):])
    try:
        with migration_connection(engine) as conn:
            _configure(conn)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
