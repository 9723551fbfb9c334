"""SQLite run store, content-addressed blobs, and the call ledger's kept texts."""

from evoarena.store.attempts import AttemptRow
from evoarena.store.blobs import BlobStore
from evoarena.store.calls import (
    CallRow,
    Conversation,
    attempt_answer,
    attempt_call_id,
    attempt_conversation,
    call_row,
    conversation,
    conversation_of,
    find_calls,
)
from evoarena.store.db import DB_NAME, RunStore, now_iso
from evoarena.store.queries import AttemptScore, CellRow, EventRow, RunRow, TestedVersion, UnitRow
from evoarena.store.texts import TextMessage, TextResponse

__all__ = [
    "DB_NAME",
    "AttemptRow",
    "AttemptScore",
    "BlobStore",
    "CallRow",
    "CellRow",
    "Conversation",
    "EventRow",
    "RunRow",
    "RunStore",
    "TextMessage",
    "TestedVersion",
    "TextResponse",
    "UnitRow",
    "attempt_answer",
    "attempt_call_id",
    "attempt_conversation",
    "call_row",
    "conversation",
    "conversation_of",
    "find_calls",
    "now_iso",
]
