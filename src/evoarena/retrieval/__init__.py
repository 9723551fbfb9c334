"""Text retrieval for memory-based methods: an offline sentence-embedding retriever with a lexical fallback.
See docs/retrieval.md."""

from evoarena.retrieval.base import Hit, Retriever, top_k
from evoarena.retrieval.embedding import (
    EXTRA,
    MODEL,
    EmbeddingRetriever,
    RetrieverUnavailable,
    available,
    instruct,
)
from evoarena.retrieval.factory import NAMES, RetrieverName, get_retriever
from evoarena.retrieval.lexical import LexicalRetriever, similarity, tokens
from evoarena.retrieval.record import RETRIEVER_FILE, RetrieverChoice

__all__ = [
    "EXTRA",
    "MODEL",
    "NAMES",
    "RetrieverName",
    "RETRIEVER_FILE",
    "EmbeddingRetriever",
    "Hit",
    "LexicalRetriever",
    "Retriever",
    "RetrieverChoice",
    "RetrieverUnavailable",
    "available",
    "get_retriever",
    "instruct",
    "similarity",
    "tokens",
    "top_k",
]
