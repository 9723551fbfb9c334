"""SQLite run store, content-addressed blobs, and the call ledger's kept texts."""

from evoarena.store.attempts import AttemptRow
from evoarena.store.blobs import BlobStore
from evoarena.store.calls import (
    CallRow,
    Conversation,
    attempt_call_id,
    attempt_conversation,
    call_row,
    conversation,
    conversation_of,
    find_calls,
)
from evoarena.store.db import DB_NAME, RunStore, now_iso
from evoarena.store.texts import TextMessage, TextResponse

__all__ = [
    "DB_NAME",
    "AttemptRow",
    "BlobStore",
    "CallRow",
    "Conversation",
    "RunStore",
    "TextMessage",
    "TextResponse",
    "attempt_call_id",
    "attempt_conversation",
    "call_row",
    "conversation",
    "conversation_of",
    "find_calls",
    "now_iso",
]
