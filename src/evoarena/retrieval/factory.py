"""Retrievers by name, as method params give them: `auto`, `embedding` or `lexical`."""

from __future__ import annotations

import threading
from typing import Literal, get_args

from evoarena.retrieval.base import Retriever
from evoarena.retrieval.embedding import EmbeddingRetriever, RetrieverUnavailable, import_error, missing_extra_message
from evoarena.retrieval.lexical import LexicalRetriever

RetrieverName = Literal["auto", "embedding", "lexical"]
"""A retriever as a method's param names it."""
NAMES: tuple[str, ...] = get_args(RetrieverName)

_shared: EmbeddingRetriever | None = None
_shared_lock = threading.Lock()


def _embedding() -> EmbeddingRetriever:
    """One embedding retriever per process, so the model loads once and cells share the embedding cache."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EmbeddingRetriever()
        return _shared


def get_retriever(name: str) -> Retriever:
    """`lexical`; `embedding` (RetrieverUnavailable, naming the extra, when it is not installed); `auto`: the
    embedding retriever when the `retrieval` extra imports, else lexical. ValueError for any other name."""
    if name == "lexical":
        return LexicalRetriever()
    if name == "embedding":
        why = import_error()
        if why is not None:
            raise RetrieverUnavailable(missing_extra_message(why))
        return _embedding()
    if name == "auto":
        return _embedding() if import_error() is None else LexicalRetriever()
    raise ValueError(f"unknown retriever {name!r} (known: {', '.join(NAMES)})")
