"""Response cache keyed by (model id, params, messages, sample index), shared across runs."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from evoarena.models.base import Completion, GenParams, Message


def default_cache_path() -> Path:
    base = os.environ.get("EVOARENA_CACHE_DIR") or str(Path.home() / ".cache" / "evoarena")
    return Path(base) / "responses.sqlite"


def prompt_hash(messages: Sequence[Message]) -> str:
    blob = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def cache_key(model_id: str, params: GenParams, messages: Sequence[Message], sample_index: int) -> str:
    blob = json.dumps(
        {"model": model_id, "params": params.as_dict(), "prompt": prompt_hash(messages), "sample": sample_index},
        sort_keys=True,
    ).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


class ResponseCache:
    """Successful completions only; errors are never cached."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=10000")
        self._conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute("SELECT completion FROM responses WHERE key=?", [key]).fetchone()
        return None if row is None else Completion.from_json(json.loads(row[0]))

    def put(self, key: str, completion: Completion) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)",
                [key, json.dumps(completion.to_json(), sort_keys=True)],
            )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
