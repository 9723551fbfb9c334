"""SQLite run store and content-addressed blobs."""

from evoarena.store.blobs import BlobStore
from evoarena.store.db import DB_NAME, RunStore, now_iso

__all__ = ["DB_NAME", "BlobStore", "RunStore", "now_iso"]
