"""Content-addressed texts inside the run database: every model call's messages and response, each stored once.

Layout (all in table `texts`, digest = sha256 of the uncompressed utf-8 text, body = zlib of it):

- each message content is its own text, so a system prompt shown in thousands of calls is stored once;
- a call's request is the text `[[role, content_digest], ...]` (compact JSON); the generation parameters stay in
  the `calls.params` column, so two calls that differ only in seed or sample share one request text. A message that
  carries tool calls or a tool result (function calling) has a third element, `{"tool_calls": [{id, name,
  arguments}], "tool_call_id": ...}` (only the keys it has);
- a call's response is the text `{"finish_reason": ..., "logprobs": ..., "text": ...}` (compact JSON, sorted keys;
  logprobs as the completion carried them: a list of `{"token", "logprob"}` or null), with `"tool_calls"` only when
  the model made some.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from evoarena.codec import to_plain

RequestMessage = Sequence[Any]
"""A message as a request is recorded: `(role, content)`, or `(role, content, {"tool_calls", "tool_call_id"})`."""


def _none(value: object) -> bool:
    return value is None


def _empty(value: object) -> bool:
    return not value


@dataclass(frozen=True)
class TextMessage:
    """One message of a stored request, with its full content (and the tool calls it made or the call it answers)."""

    role: str
    content: str
    tool_calls: Annotated[list[dict[str, str]] | None, Field(exclude_if=_none)] = None
    tool_call_id: Annotated[str | None, Field(exclude_if=_none)] = None


@dataclass(frozen=True)
class TextResponse:
    """A stored response: the completion's text, finish reason and logprobs (None when the backend gave none), and
    the tool calls the model made (None when it made none)."""

    text: str
    finish_reason: str | None = None
    logprobs: list[dict[str, Any]] | None = None
    tool_calls: Annotated[list[dict[str, str]] | None, Field(exclude_if=_empty)] = None


def text_digest(text: str) -> str:
    """The address of a text: sha256 of its utf-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def put_text(conn: sqlite3.Connection, text: str, known: set[str] | None = None) -> str:
    """Store `text` unless it is already there (compressing only then); return its digest. Idempotent. `known`: the
    digests this transaction has put already (a unit's calls share their system prompt), which need no look-up."""
    digest = text_digest(text)
    if known is not None:
        if digest in known:
            return digest
        known.add(digest)
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


def put_request(conn: sqlite3.Connection, messages: Sequence[RequestMessage], known: set[str] | None = None) -> str:
    """Store each message content, then the request list `[[role, content_digest(, extra)], ...]`; return its
    digest."""
    return put_text(conn, _dumps([[m[0], put_text(conn, m[1], known), *m[2:3]] for m in messages]), known)


def get_request(conn: sqlite3.Connection, digest: str) -> list[TextMessage]:
    """The messages of the request stored under `digest`, with their full contents."""
    out = []
    for role, d, *extra in json.loads(get_text(conn, digest)):
        more = extra[0] if extra else {}
        out.append(TextMessage(role, get_text(conn, d), more.get("tool_calls"), more.get("tool_call_id")))
    return out


def put_response(conn: sqlite3.Connection, response: TextResponse, known: set[str] | None = None) -> str:
    """Store a response as one text; identical responses (a cached call's) share it."""
    return put_text(conn, _dumps(to_plain(response)), known)


def get_response(conn: sqlite3.Connection, digest: str) -> TextResponse:
    d = json.loads(get_text(conn, digest))
    return TextResponse(text=d["text"], finish_reason=d.get("finish_reason"), logprobs=d.get("logprobs"),
                        tool_calls=d.get("tool_calls"))
