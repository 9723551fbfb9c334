"""Response cache keyed by (model id, params, messages, sample index), shared across runs. Tools (function calling)
are part of the params and tool calls and results part of the messages, each only when present: a call without them
keys as it did before tools existed."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from evoarena.models.base import Backend, Completion, GenParams, Message
from evoarena.store.responses import ResponseTable


def default_cache_path() -> Path:
    base = os.environ.get("EVOARENA_CACHE_DIR") or str(Path.home() / ".cache" / "evoarena")
    return Path(base) / "responses.sqlite"


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 of the messages as JSON; the last few are remembered (a call needs its digest for its cache key and
    again for its ledger row)."""
    return _prompt_hash(tuple(messages))


@functools.lru_cache(maxsize=64)
def _prompt_hash(messages: tuple[Message, ...]) -> str:
    blob = json.dumps([m.ledger_form() for m in messages], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def cache_key(
    model_id: str, params: GenParams, messages: Sequence[Message], sample_index: int, *, seed_free: bool = False
) -> str:
    """The response cache's key. `seed_free` leaves the seed out (a greedy call on a backend whose greedy decoding
    ignores it), so replicate seeds of a deterministic call share one answer instead of recomputing it."""
    shown = params.ledger_form()
    if seed_free:
        shown["seed"] = None
    blob = json.dumps(
        {"model": model_id, "params": shown, "prompt": prompt_hash(messages), "sample": sample_index},
        sort_keys=True,
    ).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def call_key(backend: Backend, params: GenParams, messages: Sequence[Message], sample_index: int) -> str:
    """The cache key of a call to `backend`: seed-free when it is greedy (temperature 0) on a backend that says its
    greedy decoding ignores the seed (`greedy_ignores_seed`)."""
    seed_free = params.temperature == 0 and bool(getattr(backend, "greedy_ignores_seed", False))
    return cache_key(backend.model_id, params, messages, sample_index, seed_free=seed_free)


class ResponseCache:
    """Successful completions only; errors are never cached."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path()
        self._table = ResponseTable(self.path)

    def get(self, key: str) -> Completion | None:
        raw = self._table.get(key)
        return None if raw is None else Completion.from_ledger_form(json.loads(raw))

    def put(self, key: str, completion: Completion) -> None:
        self._table.put(key, json.dumps(completion.ledger_form(), sort_keys=True))

    def close(self) -> None:
        self._table.close()
