"""The run store: one SQLite database (WAL) per run directory, plus a blob folder."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import evoarena.store.texts as texts
from evoarena.store.attempts import AttemptRow
from evoarena.store.blobs import BlobStore
from evoarena.store.texts import RequestMessage, TextMessage, TextResponse

DB_NAME = "run.sqlite"

# Columns added after the first stores were written: (table, column, type), added on open when missing.
_ADDED_COLUMNS = (
    ("calls", "unit", "TEXT"),  # the unit key a call/event belongs to
    ("events", "unit", "TEXT"),
    ("calls", "request_blob", "TEXT"),  # the call's messages and response, in `texts` (see store/texts.py)
    ("calls", "response_blob", "TEXT"),
    ("attempts", "call_id", "INTEGER"),  # the call that produced the attempt's answer
    ("calls", "prompt_format", "TEXT"),  # embedded: "chat-template" | "plain"; NULL for other backends
    ("calls", "input_tokens_evaluated", "INTEGER"),  # prompt tokens the model computed (the rest reused); NULL: unknown
    ("events", "source", "TEXT"),  # "runner" or "method" (what a method logged); NULL in stores written before
    ("cells", "selection_json", "TEXT"),  # why the selected version was kept (store/selection.py)
    ("tasks", "prompt", "TEXT"),  # the task's text as the benchmark wrote it (every split: the solver is shown it)
    ("tasks", "reference", "TEXT"),  # a train task's reference (labels methods may read); NULL for val and test
)


@contextmanager
def unsynced_setup(conn: sqlite3.Connection) -> Iterator[None]:
    """WAL mode and the schema without fsyncs, then `synchronous=NORMAL` for everything after. Switching a new file
    to WAL and creating its tables fsyncs several times (~25 ms on this disk, most of a small run's fixed cost); a
    killed process loses nothing by skipping them (the writes are in the OS's cache), and in WAL mode NORMAL syncs
    no commit either, only checkpoints."""
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA journal_mode=WAL")
    try:
        yield
    finally:
        conn.execute("PRAGMA synchronous=NORMAL")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RunStore:
    """Thread-safe access to one run directory's database and blobs."""

    def __init__(self, run_dir: Path, *, read_only: bool = False) -> None:
        self.run_dir = Path(run_dir)
        self.read_only = read_only
        if not read_only:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        self.blobs = BlobStore(self.run_dir / "blobs", create=not read_only)
        self._lock = threading.RLock()
        self._next_call: int | None = None  # ledger row ids are handed out here: a deferred row has one before it is
        # written (one process writes a run directory at a time)
        self._deferred: dict[tuple[str | None, str | None], list[tuple[Any, Any, dict[str, Any]]]] = {}
        if read_only:  # a reader beside the run's writer (`evoarena view`): sees each commit, can write nothing
            db = (self.run_dir / DB_NAME).resolve()
            self._conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, check_same_thread=False,
                                         isolation_level=None)
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA busy_timeout=10000")
            return
        self._conn = sqlite3.connect(self.run_dir / DB_NAME, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA busy_timeout=10000")
        schema = resources.files("evoarena.store").joinpath("schema.sql").read_text(encoding="utf-8")
        with self._lock, unsynced_setup(self._conn):
            self._conn.executescript(schema)
            for table, column, kind in _ADDED_COLUMNS:
                cols = {r["name"] for r in self._conn.execute(f"PRAGMA table_info({table})")}
                if column not in cols:
                    self._conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")

    @classmethod
    def open_existing(cls, run_dir: Path, *, read_only: bool = False) -> RunStore:
        if not (Path(run_dir) / DB_NAME).is_file():
            raise FileNotFoundError(f"{run_dir}: not a run directory (no {DB_NAME})")
        return cls(run_dir, read_only=read_only)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self._lock:
            self._conn.execute(sql, params)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._conn.execute(sql, params).fetchall()]

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    # -- runs and cells -------------------------------------------------------------------------
    def upsert_run(self, **row: Any) -> None:
        cols = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        updates = ", ".join(f"{c}=excluded.{c}" for c in row if c not in ("id", "started_at"))
        self.execute(
            f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {updates}",
            list(row.values()),
        )

    def update_run(self, run_id: str, **row: Any) -> None:
        sets = ", ".join(f"{c}=?" for c in row)
        self.execute(f"UPDATE runs SET {sets} WHERE id=?", [*row.values(), run_id])

    def run(self) -> dict[str, Any] | None:
        return self.query_one("SELECT * FROM runs LIMIT 1")

    def upsert_cell(self, cell: str, **row: Any) -> None:
        existing = self.query_one("SELECT cell FROM cells WHERE cell=?", [cell])
        if existing is None:
            cols = ["cell", *row]
            self.execute(
                f"INSERT INTO cells ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                [cell, *row.values()],
            )
        elif row:
            sets = ", ".join(f"{c}=?" for c in row)
            self.execute(f"UPDATE cells SET {sets} WHERE cell=?", [*row.values(), cell])

    def cells(self) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM cells ORDER BY cell")

    # -- units (resume) -------------------------------------------------------------------------
    def unit_result(self, cell: str, key: str) -> dict[str, Any] | None:
        row = self.query_one("SELECT result FROM units WHERE cell=? AND key=?", [cell, key])
        return None if row is None else json.loads(row["result"])

    def finish_unit(self, cell: str, key: str, result: dict[str, Any], attempts: Sequence[AttemptRow]) -> None:
        """Record a finished unit, its attempts and its deferred ledger rows in one transaction, so a kill never
        half-records it (the attempts' output texts go to the blob store first: content-addressed, so a redo rewrites
        the same files)."""
        blobs = [self.blobs.put(a.text) if a.text else None for a in attempts]
        with self.transaction() as conn:
            known: set[str] = set()  # texts put in this transaction: a unit's calls share most of theirs
            for request, response, row in self._deferred.pop((cell, key), []):
                self._insert_call(conn, request, response, row, known)
            conn.executemany(
                "INSERT INTO attempts (cell, unit_key, created_at, phase, task_id, version_id, answer, score, passed,"
                " error, parse_error, output_blob, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [[cell, key, now_iso(), a.phase, a.task_id, a.version_id, a.answer, a.score,
                  None if a.passed is None else int(a.passed), a.error, a.parse_error, blob, a.call_id]
                 for a, blob in zip(attempts, blobs, strict=True)],
            )
            conn.execute(
                "INSERT OR REPLACE INTO units (cell, key, result, finished_at) VALUES (?, ?, ?, ?)",
                [cell, key, json.dumps(result, sort_keys=True), now_iso()],
            )

    # -- calls and events -----------------------------------------------------------------------
    def record_call(
        self,
        *,
        request: Sequence[RequestMessage] | None = None,
        response: TextResponse | None = None,
        **row: Any,
    ) -> int:
        """Insert a ledger row with its request messages `(role, content)` and response texts, in one transaction
        (a kill never leaves a row without its texts or texts without their row); return the row id."""
        row.setdefault("created_at", now_iso())
        with self.transaction() as conn:
            row["id"] = self.new_call_id(conn)
            return self._insert_call(conn, request, response, row)

    def defer_call(self, *, request: Sequence[RequestMessage], response: TextResponse | None, **row: Any) -> int:
        """A ledger row written with its unit (`finish_unit` of its cell and unit), in that unit's transaction: one
        commit per unit instead of one per call. For calls a kill cannot leave unpaid and unrecorded — cache hits and
        calls to a backend that bills nothing (scripted) — so a unit cut off takes its deferred rows with it and its
        redo writes them again. Returns the row's id, handed out now."""
        row.setdefault("created_at", now_iso())
        with self._lock:
            row["id"] = self.new_call_id(self._conn)
            self._deferred.setdefault((row.get("cell"), row.get("unit")), []).append((request, response, row))
            return int(row["id"])

    def new_call_id(self, conn: sqlite3.Connection) -> int:
        """The next ledger row id (handed out in this process, so a deferred row has one before it is written)."""
        with self._lock:
            if self._next_call is None:
                top = conn.execute("SELECT COALESCE(MAX(id), 0) FROM calls").fetchone()[0]
                seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'calls'").fetchone()
                self._next_call = max(int(top), int(seq[0]) if seq else 0) + 1
            self._next_call += 1
            return self._next_call - 1

    @staticmethod
    def _insert_call(conn: sqlite3.Connection, request: Sequence[RequestMessage] | None,
                     response: TextResponse | None, row: dict[str, Any], known: set[str] | None = None) -> int:
        if request is not None:
            row["request_blob"] = texts.put_request(conn, request, known)
        if response is not None:
            row["response_blob"] = texts.put_response(conn, response, known)
        cols = ", ".join(row)
        conn.execute(f"INSERT INTO calls ({cols}) VALUES ({', '.join('?' for _ in row)})", list(row.values()))
        return int(row["id"])

    def finish_call(self, call_id: int, *, response: TextResponse | None = None, **row: Any) -> None:
        """Complete a row `record_call` wrote before its call was made (its outcome, tokens, latency, response),
        in one transaction."""
        with self.transaction() as conn:
            if response is not None:
                row["response_blob"] = texts.put_response(conn, response)
            sets = ", ".join(f"{c} = ?" for c in row)
            conn.execute(f"UPDATE calls SET {sets} WHERE id = ?", [*row.values(), call_id])

    def drop_call(self, call_id: int) -> None:
        """Remove a row written for a call that was never made (the run stopped before its first try)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM calls WHERE id = ?", [call_id])

    # -- texts (content-addressed, in the database) ---------------------------------------------
    def put_text(self, text: str) -> str:
        """Store `text` once under its sha256 (idempotent) and return the digest."""
        with self.transaction() as conn:
            return texts.put_text(conn, text)

    def get_text(self, digest: str) -> str:
        """The text stored under `digest`; KeyError when there is none."""
        with self._lock:
            return texts.get_text(self._conn, digest)

    def get_request(self, digest: str) -> list[TextMessage]:
        """A call's messages, from its `request_blob`."""
        with self._lock:
            return texts.get_request(self._conn, digest)

    def get_response(self, digest: str) -> TextResponse:
        """A call's response, from its `response_blob`."""
        with self._lock:
            return texts.get_response(self._conn, digest)

    def event(self, kind: str, payload: dict[str, Any], cell: str | None = None, unit: str | None = None, *,
              source: str = "runner") -> None:
        """`unit`: the cell's unit key the event happened in (a practice step, a test), when there is one. `source`:
        "method" for what a method logged (`ctx.log`), so that no method event passes for one of the runner's."""
        self.execute(
            "INSERT INTO events (ts, cell, kind, payload, unit, source) VALUES (?, ?, ?, ?, ?, ?)",
            [now_iso(), cell, kind, json.dumps(payload, sort_keys=True, default=str), unit, source],
        )

    def drop_unit_events(self, cell: str, unit: str) -> None:
        """Forget the events (and deferred ledger rows) of a unit about to be redone: a unit cut off keeps none of its
        rows."""
        with self._lock:
            self._deferred.pop((cell, unit), None)
        self.execute("DELETE FROM events WHERE cell=? AND unit=?", [cell, unit])

    # -- tasks ----------------------------------------------------------------------------------
    def record_tasks(self, rows: Sequence[tuple[str, str, str, str, str | None, str | None]]) -> None:
        """(task id, split, source id, payload hash, prompt, reference) of the run's tasks; a resumed run of a store
        written before tasks kept their text fills it in."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO tasks (task_id, split, source_id, payload_hash, prompt, reference)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET prompt = excluded.prompt,"
                " reference = excluded.reference WHERE tasks.prompt IS NULL",
                rows,
            )
