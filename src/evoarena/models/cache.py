"""Response cache keyed by (model id, params, messages, sample index), shared across runs."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from evoarena.models.base import Completion, GenParams, Message
from evoarena.store.responses import ResponseTable


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
        self._table = ResponseTable(self.path)

    def get(self, key: str) -> Completion | None:
        raw = self._table.get(key)
        return None if raw is None else Completion.from_json(json.loads(raw))

    def put(self, key: str, completion: Completion) -> None:
        self._table.put(key, json.dumps(completion.to_json(), sort_keys=True))

    def close(self) -> None:
        self._table.close()
