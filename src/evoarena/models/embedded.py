"""In-process llama.cpp backend (llama-cpp-python), by default serving the shipped Qwen2.5-Coder-1.5B-Instruct.

`spec.model` names a shipped model (`models/shipped.py`: "" is the default, Qwen2.5-Coder-1.5B-Instruct;
`qwen2.5-coder-0.5b-instruct`, `gemma3-270m`, ...) or is a path to any `.gguf`. The prompt format follows the model:

- instruct models ("chat-template"): the messages are rendered by the GGUF's own chat template
  (`tokenizer.chat_template` in its metadata, through llama-cpp-python's `Jinja2ChatFormatter` with the model's
  bos/eos tokens and the generation prompt appended), exactly the prompt llama.cpp's chat completion would build;
- base models ("plain", e.g. Gemma 3 270M): messages are flattened into plain text (system contents first, then the
  other contents in order, separated by blank lines). Prompts are best written few-shot, ending where the answer
  should start.

A shipped model is instruct or base by its table row; a `.gguf` path is instruct iff its metadata carries a chat
template. Either way the prompt is then tokenized and completed by the same sampler, seed, stop and logprobs code,
so temperature, seeds and logprobs mean the same for both formats. Generation stops at the model's end-of-turn
token(s) or a `stop` string. `prompt_format` says which format a backend uses; the ledger records it per call.

Sampling is plain temperature sampling (top-k/top-p/min-p/repeat penalty all off), greedy when
temperature == 0, so `temperature` means what it means for an OpenAI-compatible server with
top_p=1. A given seed re-seeds the sampler, so a seeded call is reproducible; an unseeded call
at temperature > 0 draws a fresh seed.

Logprobs: `create_completion` returns them only with `logits_all=True` (generation 48 -> 2.4 tok/s here), so calls
that ask for them run the same sampler through `Llama.generate` and read the last-token logits llama.cpp computes
anyway (same text; tested): the raw distribution's, before temperature; `top_logprobs` = n adds the n most likely
tokens at each position (`TokenLogprob.top`).

The extra (`pip install 'evoarena[embedded]'`) is imported lazily. One `Llama` per (GGUF path, n_ctx) per process;
a lone call holds its lock, calls that find it busy are decoded together (`embedded_batch.py`), and the KV of recent
prompts is kept and restored by shared prefix (`prefix_cache.py`). Exactly one attempt per call.
Threads: n_threads = os.cpu_count() unless EVOARENA_EMBEDDED_THREADS overrides it.
"""

from __future__ import annotations

import atexit
import math
import os
import random
import struct
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from evoarena.models.base import Completion, GenParams, Message, ProviderError, TokenLogprob, Usage, refuse_tools
from evoarena.models.embedded_batch import complete as complete_batched
from evoarena.models.prefix_cache import PrefixReuse
from evoarena.models.shipped import SHIPPED, assemble, resolve
from evoarena.spec import ModelSpec

INSTALL_HINT = "install it with: pip install 'evoarena[embedded]'  (or, in a checkout: make embedded)"
PromptFormat = Literal["chat-template", "plain"]

# Sampler settings for every call: temperature is the only knob (see the module docstring).
_SAMPLER: dict[str, Any] = {"top_k": 0, "top_p": 1.0, "min_p": 0.0, "typical_p": 1.0, "repeat_penalty": 1.0}


@dataclass
class _Loaded:
    llm: Any  # llama_cpp.Llama
    path: str
    n_ctx: int
    load_s: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    chat: Any = None  # llama_cpp.llama_chat_format.Jinja2ChatFormatter of the GGUF's template, when it has one
    prefix: PrefixReuse = field(default_factory=PrefixReuse)  # KV of recent prompts, restored by shared prefix


THREADS_ENV = "EVOARENA_EMBEDDED_THREADS"  # override n_threads (generation); default os.cpu_count()

_MODELS: dict[tuple[str, int], _Loaded] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter teardown; llama_cpp's own __del__ fails once its globals are gone."""
    with _MODELS_LOCK:
        for loaded in _MODELS.values():
            close = getattr(loaded.llm, "close", None)
            if close is not None:
                close()
        _MODELS.clear()


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as err:  # also catches a wheel whose shared library fails to load
        raise RuntimeError(f"embedded backend needs llama-cpp-python ({err}); {INSTALL_HINT}") from None
    return llama_cpp


def format_prompt(messages: Sequence[Message]) -> str:
    """Plain text for a base model: system contents first, then the rest in order, blank-line separated."""
    system = [m.content for m in messages if m.role == "system"]
    rest = [m.content for m in messages if m.role != "system"]
    return "\n\n".join(system + rest)


# GGUF metadata value types (gguf spec): fixed sizes for scalars; 8 = string, 9 = array.
_GGUF_SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def _gguf_skip(f: BinaryIO, kind: int) -> None:
    if kind in _GGUF_SCALARS:
        f.seek(_GGUF_SCALARS[kind], os.SEEK_CUR)
    elif kind == 8:
        (n,) = struct.unpack("<Q", f.read(8))
        f.seek(n, os.SEEK_CUR)
    elif kind == 9:
        inner, count = struct.unpack("<IQ", f.read(12))
        if inner in _GGUF_SCALARS:
            f.seek(_GGUF_SCALARS[inner] * count, os.SEEK_CUR)
        else:
            for _ in range(count):
                _gguf_skip(f, inner)
    else:
        raise ValueError(f"unknown GGUF value type {kind}")


def gguf_chat_template(path: str | Path) -> str | None:
    """The `tokenizer.chat_template` in a GGUF file's metadata, or None; read from the header in pure Python, so no
    weights are loaded (llama.cpp is not needed). ValueError for a file that is not GGUF v2/v3."""
    with Path(path).open("rb", buffering=1 << 20) as f:
        magic, version = f.read(4), struct.unpack("<I", f.read(4))[0]
        if magic != b"GGUF" or version < 2:
            raise ValueError(f"{path}: not a GGUF v2/v3 file")
        _tensors, n_kv = struct.unpack("<QQ", f.read(16))
        for _ in range(n_kv):
            (klen,) = struct.unpack("<Q", f.read(8))
            key = f.read(klen).decode("utf-8", errors="replace")
            (kind,) = struct.unpack("<I", f.read(4))
            if key == "tokenizer.chat_template" and kind == 8:
                (n,) = struct.unpack("<Q", f.read(8))
                return f.read(n).decode("utf-8")
            _gguf_skip(f, kind)
    return None


def loaded_models() -> list[tuple[str, int, float]]:
    """(path, n_ctx, load seconds) of the models loaded in this process."""
    with _MODELS_LOCK:
        return [(m.path, m.n_ctx, m.load_s) for m in _MODELS.values()]


def n_threads() -> int:
    """os.cpu_count(), unless EVOARENA_EMBEDDED_THREADS says otherwise (see docs/models.md: on a busy
    2-core machine, 1 generation thread is several times faster than 2)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise RuntimeError(f"{THREADS_ENV} must be a positive integer, got {raw!r}") from None
    return os.cpu_count() or 1


def _load(path: str, n_ctx: int) -> _Loaded:
    key = (path, n_ctx)
    with _MODELS_LOCK:
        loaded = _MODELS.get(key)
        if loaded is None:
            llama_cpp = _import_llama_cpp()
            t0 = time.perf_counter()
            try:
                llm = llama_cpp.Llama(
                    model_path=path,
                    n_ctx=n_ctx,
                    n_threads=n_threads(),
                    n_threads_batch=os.cpu_count() or 1,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as err:
                raise RuntimeError(f"embedded backend could not load {path}: {err}") from None
            loaded = _Loaded(llm=llm, path=path, n_ctx=n_ctx, load_s=time.perf_counter() - t0,
                             chat=_chat_formatter(llama_cpp, llm))
            _MODELS[key] = loaded
        return loaded


def _chat_formatter(llama_cpp: Any, llm: Any) -> Any:
    """The GGUF's own chat template as llama-cpp-python's Jinja2ChatFormatter (as `Llama` builds it for chat
    completion: the model's bos/eos token texts), or None when the metadata carries no template."""
    template = (llm.metadata or {}).get("tokenizer.chat_template")
    if not template:
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return str(llm._model.token_get_text(token)) if token != -1 else ""

    return Jinja2ChatFormatter(template=template, eos_token=text(llm.token_eos()), bos_token=text(llm.token_bos()),
                               add_generation_prompt=True)


class EmbeddedBackend:
    """llama.cpp in this process; `spec.model` is a shipped model's name or alias ("" = the default,
    Qwen2.5-Coder-1.5B-Instruct) or a path to a `.gguf`."""

    backend_name = "embedded"
    endpoint = "embedded"
    reports_evaluated_tokens = True  # every call says how many prompt tokens it computed (prefix_cache.py)
    greedy_ignores_seed = True  # llama.cpp decodes greedily at temperature 0: the seed cannot change the answer

    def __init__(self, spec: ModelSpec) -> None:
        if spec.backend != "embedded":
            raise ValueError(f"EmbeddedBackend needs a spec with backend 'embedded', got {spec.backend!r}")
        _import_llama_cpp()  # fail fast, with the install command, if the extra is missing
        self.spec = spec
        self.n_ctx = spec.n_ctx
        row = resolve(spec.model)
        self.shipped = row
        self.prompt_format: PromptFormat
        if row is not None:
            self.path = assemble(row)
            self.model_id = f"embedded:{row.name}"
            self.prompt_format = "chat-template" if row.instruct else "plain"
        else:
            self.path = Path(spec.model).expanduser()
            if not self.path.is_file():
                raise RuntimeError(
                    f"embedded backend: model {spec.model!r} is neither a shipped model "
                    f"({', '.join(m.name for m in SHIPPED)}, or an alias) nor a GGUF file"
                )
            try:
                has_template = gguf_chat_template(self.path) is not None
            except (ValueError, OSError, struct.error) as err:
                raise RuntimeError(f"embedded backend: cannot read {self.path} as GGUF: {err}") from None
            self.model_id = f"embedded:{self.path.stem}"
            self.prompt_format = "chat-template" if has_template else "plain"
        self._loaded: _Loaded | None = None

    def __repr__(self) -> str:
        return (f"EmbeddedBackend(model_id={self.model_id!r}, path={str(self.path)!r}, n_ctx={self.n_ctx}, "
                f"prompt_format={self.prompt_format!r})")

    def load(self) -> float:
        """Load the model now (otherwise the first `complete` does); returns the load time in seconds."""
        if self._loaded is None:
            self._loaded = _load(str(self.path.resolve()), self.n_ctx)
        return self._loaded.load_s

    def tokenize(self, text: str) -> list[int]:
        """Token ids of `text` as a plain prompt (with BOS when the model wants one)."""
        self.load()
        assert self._loaded is not None
        with self._loaded.lock:
            return list(self._loaded.llm.tokenize(text.encode("utf-8"), add_bos=True, special=True))

    def render(self, messages: Sequence[Message]) -> tuple[str, bool]:
        """The prompt text the model is given for `messages`, and whether a BOS token is to be added to it: the
        chat template's rendering for an instruct model (it writes its own special tokens), else plain text."""
        if self.prompt_format == "plain":
            return format_prompt(messages), True
        self.load()
        assert self._loaded is not None
        if self._loaded.chat is None:
            raise ProviderError(f"{self.model_id}: the GGUF carries no chat template", retryable=False)
        rendered = self._loaded.chat(messages=[{"role": m.role, "content": m.content} for m in messages])
        return rendered.prompt, not rendered.added_special

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The token ids the model sees for `messages` (what `usage.input_tokens` counts)."""
        prompt, add_bos = self.render(messages)
        assert self._loaded is not None
        with self._loaded.lock:
            return list(self._loaded.llm.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True))

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        """A lone call runs `complete_alone`; calls that find the model busy are decoded together
        (`models/embedded_batch.py`)."""
        return complete_batched(self, messages, params, self.complete_alone, _SAMPLER)

    def complete_alone(self, messages: Sequence[Message], params: GenParams) -> Completion:
        """One call on the model's own context, holding its lock."""
        refuse_tools(self, params)  # no function calling in process: serve the model with --function-calling
        if params.max_tokens < 1:
            raise ProviderError(f"{self.model_id}: max_tokens must be >= 1", retryable=False)
        self.load()
        loaded = self._loaded
        assert loaded is not None
        try:
            prompt, add_bos = self.render(messages)
        except ProviderError:
            raise
        except Exception as err:  # a template that refuses these messages (e.g. raise_exception in the jinja)
            raise ProviderError(f"{self.model_id}: chat template failed: {type(err).__name__}: {err}",
                                retryable=False) from None
        temperature = max(0.0, float(params.temperature))
        seed = params.seed if params.seed is not None else random.SystemRandom().randrange(2**31)
        # llama.cpp seeds are uint32, and 0xFFFFFFFF means "random": fold any int into [0, 2**32 - 2].
        llama_seed = seed % 0xFFFFFFFF
        with loaded.lock:
            llm = loaded.llm
            try:
                tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True)
                if len(tokens) >= loaded.n_ctx:
                    raise ProviderError(
                        f"{self.model_id}: prompt is {len(tokens)} tokens, which does not fit the context "
                        f"window of {loaded.n_ctx} (n_ctx) with room to generate; shorten the prompt "
                        f"or raise n_ctx in the model spec",
                        retryable=False,
                    )
                evaluated = loaded.prefix.before(llm, tokens)
                if params.logprobs:
                    done = self._complete_with_logprobs(llm, tokens, params, temperature, llama_seed, seed)
                    loaded.prefix.after(llm)
                    done.extra["input_tokens_evaluated"] = evaluated
                    return done
                out = llm.create_completion(
                    tokens,
                    max_tokens=params.max_tokens,
                    temperature=temperature,
                    stop=list(params.stop) or None,
                    seed=llama_seed,
                    **_SAMPLER,
                )
                loaded.prefix.after(llm)
            except ProviderError:
                raise
            except Exception as err:  # llama.cpp failures (decode errors, context overflow, ...)
                llm.reset()  # leave the context clean for the next call
                raise ProviderError(
                    f"{self.model_id}: llama.cpp failed: {type(err).__name__}: {err}", retryable=False
                ) from None
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return Completion(
            text=choice["text"],
            usage=Usage(int(usage.get("prompt_tokens", len(tokens))), int(usage.get("completion_tokens", 0))),
            logprobs=None,
            finish_reason=choice.get("finish_reason"),
            extra={"seed": seed, "prompt_format": self.prompt_format, "input_tokens_evaluated": evaluated},
        )

    def _complete_with_logprobs(
        self, llm: Any, tokens: list[int], params: GenParams, temperature: float, llama_seed: int, seed: int
    ) -> Completion:
        """create_completion's loop, reading each sampled token's logprob from the last-token logits."""
        import numpy as np

        llama_cpp = _import_llama_cpp()
        n_vocab = llm.n_vocab()
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        max_tokens = min(params.max_tokens, llm.n_ctx() - len(tokens))
        stops = [s.encode("utf-8") for s in params.stop if s]

        generated: list[int] = []
        logprobs: list[float] = []
        tops: list[tuple[tuple[int, float], ...] | None] = []  # the top_logprobs alternatives, by token id
        ends: list[int] = []  # byte length of the completion text after each generated token
        text = b""
        finish = "length"
        llm.set_seed(llama_seed)
        for tok in llm.generate(tokens, temp=temperature, **_SAMPLER):
            if llama_cpp.llama_vocab_is_eog(vocab, tok):
                finish = "stop"
                break
            row = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
            top = float(row.max())
            logsumexp = top + math.log(float(np.exp(row - top).sum()))
            generated.append(tok)
            logprobs.append(float(row[tok]) - logsumexp)
            if params.top_logprobs:
                best = np.argpartition(row, -params.top_logprobs)[-params.top_logprobs:]
                best = best[np.argsort(-row[best], kind="stable")]
                tops.append(tuple((int(i), float(row[i]) - logsumexp) for i in best))
            else:
                tops.append(None)
            text = llm.detokenize(generated, prev_tokens=tokens)
            ends.append(len(text))
            cuts = [text.index(s) for s in stops if s in text]
            if cuts:
                text = text[: min(cuts)]
                finish = "stop"
                break
            if len(generated) >= max_tokens:
                break

        pieces: list[TokenLogprob] = []
        start = 0
        for i, (tok, lp) in enumerate(zip(generated, logprobs, strict=True)):
            if start >= len(text):  # this token and the rest lie inside the stop string
                break
            prev = tokens + generated[:i]
            piece = llm.detokenize([tok], prev_tokens=prev).decode("utf-8", errors="ignore")
            alts = tops[i]
            pieces.append(TokenLogprob(token=piece, logprob=lp, top=None if alts is None else tuple(
                (llm.detokenize([t], prev_tokens=prev).decode("utf-8", errors="ignore"), tlp) for t, tlp in alts)))
            start = ends[i]
        return Completion(
            text=text.decode("utf-8", errors="ignore"),
            usage=Usage(len(tokens), len(generated)),
            logprobs=tuple(pieces),
            finish_reason=finish,
            extra={"seed": seed, "prompt_format": self.prompt_format},
        )
