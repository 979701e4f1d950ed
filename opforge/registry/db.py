"""SQLite engine, write retries and in-place migration for the registry.

Several processes (CLI, agents, harness workers) share one database file, so
every connection gets WAL (readers never block the writer), a 30 s busy
timeout, enforced foreign keys, and write transactions that take the write
lock up front (BEGIN IMMEDIATE) instead of upgrading a read lock halfway.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from alembic import command
from alembic.config import Config
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from opforge.registry.errors import RegistryError
from opforge.registry.validation import dumps_json

log = logging.getLogger(__name__)

T = TypeVar("T")

BUSY_TIMEOUT_S = 30.0
WRITE_ATTEMPTS = 6
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# Execution option read by the "begin" hook; the write engine sets it.
_BEGIN_OPTION = "opforge_sqlite_begin"


def sqlite_url(path: Path | str) -> str:
    return f"sqlite:///{Path(path)}"


def _on_connect(dbapi_conn: Any, _record: Any) -> None:
    # Take transaction control away from pysqlite: its implicit BEGIN skips
    # DDL and cannot be IMMEDIATE. SQLAlchemy's "begin" hook issues it instead.
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        _enable_wal(cursor)
        cursor.execute("PRAGMA foreign_keys = ON")
        # NORMAL is durable across application crashes in WAL mode and avoids
        # an fsync per commit, which matters with thousands of evaluations.
        cursor.execute("PRAGMA synchronous = NORMAL")
    finally:
        cursor.close()


def _enable_wal(cursor: Any) -> None:
    """Switch the file to WAL, retrying: the switch ignores busy_timeout.

    Converting a new file to WAL needs an exclusive lock, and SQLite reports
    SQLITE_BUSY at once instead of waiting when another process holds one,
    which happens when several processes open a fresh database together.
    WAL is persistent, so later connections only read the mode back.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.01
    while True:
        try:
            (mode,) = cursor.execute("PRAGMA journal_mode = WAL").fetchone()
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 0.5)
    if mode.lower() != "wal":
        # E.g. a filesystem without shared memory: still correct, just with
        # readers and the writer blocking each other.
        log.warning("SQLite refused WAL journal mode (got %r); concurrency will suffer", mode)


def _on_begin(conn: Connection) -> None:
    mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


def make_engine(path: Path | str) -> Engine:
    """Engine for a registry file with the pragmas and BEGIN hook installed."""
    engine = create_engine(sqlite_url(path), json_serializer=dumps_json)
    event.listen(engine, "connect", _on_connect)
    event.listen(engine, "begin", _on_begin)
    return engine


def write_engine(engine: Engine) -> Engine:
    """A view of `engine` whose transactions start with BEGIN IMMEDIATE."""
    return engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})


def _is_lock_error(exc: OperationalError) -> bool:
    message = str(exc.orig).lower()
    return "database is locked" in message or "database is busy" in message


def run_write(
    factory: sessionmaker[Session],
    work: Callable[[Session], T],
    attempts: int | None = None,
) -> T:
    """Run `work` in a write transaction, retrying when SQLite reports a lock.

    busy_timeout already waits for the lock; a retry covers the cases it does
    not (WAL checkpoints, lock timeouts under heavy contention). `work` must
    be safe to repeat: it is re-run from scratch on a fresh session.
    """
    attempts = attempts or WRITE_ATTEMPTS
    for attempt in range(1, attempts + 1):
        try:
            with factory() as session, session.begin():
                return work(session)
        except IntegrityError as exc:
            # Writes check their input first and hold the write lock for the
            # whole read-then-insert, so this means a bug or a foreign writer.
            raise RegistryError(f"constraint violated: {exc.orig}") from exc
        except OperationalError as exc:
            if not _is_lock_error(exc):
                raise RegistryError(f"database error: {exc.orig}") from exc
            if attempt == attempts:
                raise RegistryError(f"database still locked after {attempts} attempts") from exc
            delay = 0.05 * 2**attempt * (1 + random.random())
            log.warning("registry write hit a lock (attempt %d), retrying in %.2fs", attempt, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def alembic_config(path: Path | str) -> Config:
    """Alembic configuration built in code: no alembic.ini is read at runtime."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # ConfigParser interpolation treats '%' specially; paths may contain it.
    config.set_main_option("sqlalchemy.url", sqlite_url(path).replace("%", "%%"))
    return config


@contextmanager
def migration_connection(engine: Engine) -> Iterator[Connection]:
    """One IMMEDIATE transaction with foreign keys off, checked before commit.

    Batch migrations on SQLite copy and drop tables, which enforced foreign
    keys would turn into cascades or refusals; the pragma is ignored inside a
    transaction, so it is set on the raw connection before BEGIN, and that
    connection is thrown away afterwards. The write
    lock also stops two processes opening an old database from both migrating.
    """
    with write_engine(engine).connect() as conn:
        raw = conn.connection.driver_connection
        raw.execute("PRAGMA foreign_keys = OFF")
        try:
            with conn.begin():
                yield conn
                violations = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if violations:
                    raise RegistryError(f"migration broke foreign keys: {violations[:5]}")
        finally:
            # Discard rather than re-enable: the pool must never hand out a
            # connection with foreign keys off, even if re-enabling would fail.
            conn.invalidate()


def migrate(engine: Engine, path: Path | str, revision: str = "head", downgrade: bool = False) -> None:
    """Upgrade (or downgrade) the database behind `engine` to `revision`."""
    config = alembic_config(path)
    with migration_connection(engine) as conn:
        # env.py runs on this connection and inside its transaction.
        config.attributes["connection"] = conn
        try:
            if downgrade:
                command.downgrade(config, revision)
            else:
                command.upgrade(config, revision)
        except CommandError as exc:
            # Typically a database written by a newer opforge whose revision
            # this checkout does not know: say so instead of a bare traceback.
            raise RegistryError(f"cannot migrate {path} to {revision!r}: {exc}") from exc
