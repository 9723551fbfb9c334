"""The response cache's table: completions as JSON text by cache key, in one SQLite file shared across runs."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from evoarena.store.db import unsynced_setup


class ResponseTable:
    """`responses(key, completion)`; WAL, so several runs may share the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA busy_timeout=10000")
        # committed writes survive a killed process without an fsync per put (WAL + NORMAL); an OS crash may lose the
        # last puts, which costs only repeated calls
        with unsynced_setup(self._conn):
            self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT completion FROM responses WHERE key=?", [key]).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, completion_json: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)",
                               [key, completion_json])

    def close(self) -> None:
        with self._lock:
            self._conn.close()
