"""Content-addressed blobs: large traces and harness trees live as files named by their sha256."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path


class BlobStore:
    def __init__(self, root: Path, *, create: bool = True) -> None:
        self.root = root
        if create:
            self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, digest: str) -> str:
        return os.path.join(self.root, digest[:2], digest[2:])  # os.path, not pathlib: every attempt puts a blob

    def put(self, data: str | bytes) -> str:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        digest = hashlib.sha256(raw).hexdigest()
        path = self._path(digest)
        if not os.path.exists(path):
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            # a temp name of its own per writer: parallel cells often put the same blob (identical harness trees)
            fd, tmp = tempfile.mkstemp(prefix=f".{digest[2:12]}.", suffix=".tmp", dir=parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(raw)
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        return digest

    def get(self, digest: str) -> bytes:
        with open(self._path(digest), "rb") as fh:
            return fh.read()

    def get_text(self, digest: str) -> str:
        return self.get(digest).decode("utf-8")
