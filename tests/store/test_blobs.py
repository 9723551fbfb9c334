"""Content-addressed blobs under concurrent writers."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import evoarena.store.blobs as blobs
from evoarena.store.blobs import BlobStore


def test_threads_putting_the_same_blob_at_once_all_succeed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parallel cells put identical harness trees; each writer has a temp file of its own."""
    real = os.replace

    def slow_replace(src: Any, dst: Any) -> None:  # widens the window between writing and renaming
        time.sleep(0.02)
        real(src, dst)

    monkeypatch.setattr(blobs.os, "replace", slow_replace)
    store = BlobStore(tmp_path / "blobs")
    data = b"x" * 200_000
    for round_ in range(3):
        payload = data + bytes([round_])
        with ThreadPoolExecutor(8) as pool:
            digests = set(pool.map(store.put, [payload] * 16))
        assert len(digests) == 1 and store.get(digests.pop()) == payload
    assert not [f for f in (tmp_path / "blobs").rglob("*") if f.name.endswith(".tmp")]
