"""Content-addressed texts inside the run database: every model call's messages and response, each stored once.

Layout (all in table `texts`, digest = sha256 of the uncompressed utf-8 text, body = zlib of it):

- each message content is its own text, so a system prompt shown in thousands of calls is stored once;
- a call's request is the text `[[role, content_digest], ...]` (compact JSON); the generation parameters stay in
  the `calls.params` column, so two calls that differ only in seed or sample share one request text;
- a call's response is the text `{"finish_reason": ..., "logprobs": ..., "text": ...}` (compact JSON, sorted keys;
  logprobs as the completion carried them: a list of `{"token", "logprob"}` or null).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TextMessage:
    """One message of a stored request, with its full content."""

    role: str
    content: str


@dataclass(frozen=True)
class TextResponse:
    """A stored response: the completion's text, finish reason and logprobs (None when the backend gave none)."""

    text: str
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "finish_reason": self.finish_reason, "logprobs": self.logprobs}


def text_digest(text: str) -> str:
    """The address of a text: sha256 of its utf-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def put_text(conn: sqlite3.Connection, text: str) -> str:
    """Store `text` unless it is already there (compressing only then); return its digest. Idempotent."""
    digest = text_digest(text)
    if conn.execute("SELECT 1 FROM texts WHERE digest=?", [digest]).fetchone() is None:
        raw = text.encode("utf-8")
        conn.execute(
            "INSERT OR IGNORE INTO texts (digest, size, body) VALUES (?, ?, ?)", [digest, len(raw), zlib.compress(raw)]
        )
    return digest


def get_text(conn: sqlite3.Connection, digest: str) -> str:
    """The text stored under `digest`; KeyError when there is none."""
    row = conn.execute("SELECT body FROM texts WHERE digest=?", [digest]).fetchone()
    if row is None:
        raise KeyError(f"no text {digest}")
    return zlib.decompress(row[0]).decode("utf-8")


def put_request(conn: sqlite3.Connection, messages: Sequence[tuple[str, str]]) -> str:
    """Store each message content, then the request list `[[role, content_digest], ...]`; return its digest."""
    return put_text(conn, _dumps([[role, put_text(conn, content)] for role, content in messages]))


def get_request(conn: sqlite3.Connection, digest: str) -> list[TextMessage]:
    """The messages of the request stored under `digest`, with their full contents."""
    return [TextMessage(role, get_text(conn, d)) for role, d in json.loads(get_text(conn, digest))]


def put_response(conn: sqlite3.Connection, response: TextResponse) -> str:
    """Store a response as one text; identical responses (a cached call's) share it."""
    return put_text(conn, _dumps(response.to_json()))


def get_response(conn: sqlite3.Connection, digest: str) -> TextResponse:
    d = json.loads(get_text(conn, digest))
    return TextResponse(text=d["text"], finish_reason=d.get("finish_reason"), logprobs=d.get("logprobs"))
