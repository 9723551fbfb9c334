"""Several embedded calls decoded at once: calls that find their model busy wait in a queue; when the model frees,
two or more waiting calls are decoded together in a second llama.cpp context of the same weights (one sequence each,
one token of every sequence per `llama_decode`), and later arrivals join the running batch as sequences finish. On
2 cores a step of k tokens costs less than k steps of one (perf/embedded_batch.py; docs/performance.md).

A lone call (model idle, or the only call waiting) takes the backend's own path unchanged, and so does every call
the batch does not take: logprobs, tools, a prompt that does not fit, a template error (that path raises its own
error). A batched call means what a lone one means: the prompt the chat template renders, the sampler chain
`Llama.create_completion` builds (temperature only, the call's seed), its stop strings, multibyte handling,
max_tokens, end-of-turn and usage counts.

k = EVOARENA_EMBEDDED_PARALLEL (default DEFAULT_PARALLEL; 1 turns batching off). The batch context gives each
sequence a KV stream of its own n_ctx cells (k times the KV memory of the model's own context, made at the first
batch): a KV buffer shared by the sequences gave different logits for the same prompt (by up to 0.36 here) and so,
when sampling, other answers. With separate streams, each prompt evaluated on its own in the chunks `Llama.eval`
uses, and generation steps of one token per sequence, the logits are bit for bit those of a lone call on a fresh
context, for k <= 3 (tested; see DEFAULT_PARALLEL for k >= 4; a lone call that reuses part of the previous prompt's
KV sees other chunk shapes, and so can itself differ slightly at temperature > 0).
"""

from __future__ import annotations

import os
import random
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evoarena.models.base import Completion, GenParams, Message, ProviderError, Usage

_Loaded = Any  # models.embedded._Loaded: llm, path, n_ctx, lock (not imported: embedded imports this module)


class EmbeddedBackend(Protocol):
    """What this module uses of models.embedded.EmbeddedBackend."""

    _loaded: Any

    @property
    def prompt_format(self) -> str: ...

    def load(self) -> float: ...

    def render(self, messages: Sequence[Message]) -> tuple[str, bool]: ...

PARALLEL_ENV = "EVOARENA_EMBEDDED_PARALLEL"
# 3: the most sequences per step whose logits are bit for bit a lone call's. At 4 and more tokens per step llama.cpp's
# CPU kernels for the repacked Q4_K weights switch from one dot product per token to a tiled matmul (2x the decode
# throughput here, but logits that differ slightly, so sampled answers would depend on which calls shared a step).
DEFAULT_PARALLEL = 3
_MULTIBYTE = ((2, 192), (3, 224), (4, 240))  # (sequence length, lead-byte pattern), as create_completion checks


def parallel() -> int:
    """k: how many calls one batch decodes at once (EVOARENA_EMBEDDED_PARALLEL, else DEFAULT_PARALLEL)."""
    raw = os.environ.get(PARALLEL_ENV, "").strip()
    if not raw:
        return DEFAULT_PARALLEL
    try:
        return max(1, int(raw))
    except ValueError:
        raise RuntimeError(f"{PARALLEL_ENV} must be a positive integer, got {raw!r}") from None


@dataclass(eq=False)
class _Job:
    """One waiting call. `tokens` is None for a call only the backend's own path can serve."""

    tokens: list[int] | None
    max_tokens: int = 0
    temperature: float = 0.0
    seed: int = 0
    llama_seed: int = 0
    stops: tuple[bytes, ...] = ()
    done: threading.Event = field(default_factory=threading.Event)
    alone: bool = False  # handed the model, to run the backend's own path
    result: tuple[bytes, int, str] | None = None  # text, completion tokens, finish reason
    error: ProviderError | None = None
    # decoding state, while in the batch
    seq: int = -1
    sampler: Any = None
    fed: int = 0  # prompt tokens decoded so far (or restored from a kept prefix)
    evaluated: int = 0  # prompt tokens this call computes (the rest restored from the backend's prefix cache)
    out: list[int] = field(default_factory=list)
    multibyte_fix: int = 0


class _Gate:
    """Who holds one model: nobody, a lone call (the backend's path) or the batch driver; and who waits."""

    def __init__(self, loaded: _Loaded, k: int, sampler: dict[str, Any]) -> None:
        self.loaded = loaded
        self.k = k
        self.sampler = sampler
        self.cv = threading.Condition()
        self.owner: str | None = None  # None | "alone" | "batch"
        self.queue: deque[_Job] = deque()
        self.engine: _Engine | None = None
        self.batches = 0  # batch episodes run (for tests and benchmarks)
        self.batched_calls = 0
        self.broken = False  # the batch context could not be made: every call runs alone

    def take_if_idle(self) -> bool:
        """True (and the model is the caller's, to run alone) when nobody holds it and nobody waits."""
        with self.cv:
            if self.owner is None and not self.queue:
                self.owner = "alone"
                return True
            return False

    def wait_turn(self, job: _Job) -> bool:
        """Queue `job` and wait for it: True when it was handed the model to run alone, False when the batch ran it."""
        with self.cv:
            if self.owner is None and not self.queue:  # freed while the job was being prepared
                self.owner = "alone"
                return True
            self.queue.append(job)
        job.done.wait()
        return job.alone

    def release(self) -> None:
        """A lone call or a batch is done: hand the model to whoever waits."""
        with self.cv:
            self.owner = None
            self._dispatch()

    def _dispatch(self) -> None:
        if not self.queue:
            return
        head = self.queue[0]
        if self.broken or head.tokens is None or len(self.queue) == 1 or self.queue[1].tokens is None:
            self.queue.popleft()
            self.owner, head.alone = "alone", True
            head.done.set()
            return
        self.owner = "batch"
        self.batches += 1
        threading.Thread(target=self._drive, name="embedded-batch", daemon=True).start()

    def _drive(self) -> None:
        try:
            if self.engine is None:
                try:
                    self.engine = _Engine(self.loaded, self.k, self.sampler)
                except Exception:  # noqa: BLE001 - no batch context (memory, an old llama.cpp): serve calls alone
                    self.broken = True
                    return
            self.engine.drive(self)
        except BaseException as err:  # noqa: BLE001 - every waiting call gets the failure, none hangs
            failure = ProviderError(f"embedded batch failed: {type(err).__name__}: {err}", retryable=False)
            for job in self.engine.active if self.engine is not None else []:
                job.error = failure
                job.done.set()
            if self.engine is not None:
                self.engine.active.clear()
        finally:
            self.release()

    def admit(self, active: list[_Job]) -> list[_Job]:
        """Waiting batchable calls for the free sequences, in arrival order (stops at one that must run alone)."""
        taken: list[_Job] = []
        with self.cv:
            while self.queue and len(active) + len(taken) < self.k and self.queue[0].tokens is not None:
                taken.append(self.queue.popleft())
            self.batched_calls += len(taken)
        return taken


class _Engine:
    """The batch context of one model and its decoding loop."""

    def __init__(self, loaded: _Loaded, k: int, sampler: dict[str, Any]) -> None:
        import llama_cpp  # the backend has loaded it already
        from llama_cpp import _internals

        self.lc = llama_cpp
        self.internals = _internals
        self.sampler_args = sampler
        self.loaded = loaded
        llm = loaded.llm
        params = type(llm.context_params).from_buffer_copy(llm.context_params)  # the same threads, batch, flags
        params.n_seq_max = k
        params.n_ctx = loaded.n_ctx * k  # a KV stream of n_ctx cells per sequence
        params.kv_unified = False  # a unified buffer changes the logits when sequences share it (0.36 measured)
        self.ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.n_ctx = loaded.n_ctx
        self.n_batch = int(params.n_batch)
        self.batch = _internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
        self.vocab = self.lc.llama_model_get_vocab(llm.model)
        self.active: list[_Job] = []
        self.k = k
        self.free_seqs = list(range(k))

    def _sampler(self, job: _Job) -> Any:
        """The chain `Llama._init_sampler` builds for create_completion with embedded's sampler settings."""
        llm, s = self.loaded.llm, self.sampler_args
        chain = self.internals.LlamaSampler()
        chain.add_penalties(n_vocab=llm.n_vocab(), penalty_last_n=llm.last_n_tokens_size,
                            penalty_repeat=s["repeat_penalty"], penalty_freq=0.0, penalty_present=0.0)
        if job.temperature == 0.0:
            chain.add_greedy()
        else:
            chain.add_top_k(s["top_k"])
            chain.add_typical(s["typical_p"], 1)
            chain.add_top_p(s["top_p"], 1)
            chain.add_min_p(s["min_p"], 1)
            chain.add_temp(job.temperature)
            chain.add_dist(job.llama_seed)
        return chain

    def drive(self, gate: _Gate) -> None:
        """Decode until no call is active and none can be admitted."""
        self.ctx.kv_cache_clear()
        self.active, self.free_seqs = [], list(range(self.k))
        while True:
            for job in gate.admit(self.active):
                self.active.append(job)  # first: a failure below reaches every admitted call, none waits forever
                job.seq, job.sampler = self.free_seqs.pop(0), self._sampler(job)
                job.fed = self._restore(job)
                job.evaluated = len(job.tokens or ()) - job.fed
            if not self.active:
                return
            self._step()

    def _restore(self, job: _Job) -> int:
        """The kept prefix (the backend's prefix cache) sharing the most with the job's prompt, put in its sequence;
        how many prompt tokens that holds."""
        prefix = getattr(self.loaded, "prefix", None)
        if prefix is None or job.tokens is None:
            return 0
        with self.loaded.lock:
            return int(prefix.restore_into(self.ctx.ctx, job.seq, job.tokens))

    def _step(self) -> None:
        """One llama_decode: the next prompt chunk of one call still reading its prompt, on its own (as
        `Llama.eval` feeds it: n_batch tokens at a time), else the next token of every generating call."""
        reading = [job for job in self.active if job.fed < len(job.tokens or ())]
        items: list[tuple[int, int, int, _Job | None]] = []  # token, position, seq, job whose next token it gives
        if reading:
            head = reading[0]
            assert head.tokens is not None
            chunk = head.tokens[head.fed:head.fed + self.n_batch]
            last = len(head.tokens) - 1
            items = [(tok, head.fed + i, head.seq, head if head.fed + i == last else None)
                     for i, tok in enumerate(chunk)]
            head.fed += len(chunk)
        else:
            items = [(job.out[-1], len(job.tokens or ()) + len(job.out) - 1, job.seq, job) for job in self.active]
        b = self.batch.batch
        b.n_tokens = len(items)
        for i, (tok, pos, seq, owner) in enumerate(items):
            b.token[i], b.pos[i], b.seq_id[i][0], b.n_seq_id[i], b.logits[i] = tok, pos, seq, 1, owner is not None
        with self.loaded.lock:
            rc = self.lc.llama_decode(self.ctx.ctx, b)
            if rc != 0:
                raise RuntimeError(f"llama_decode returned {rc}")
            picks = [(o, o.sampler.sample(self.ctx, i)) for i, (*_, o) in enumerate(items) if o is not None]
        for job, tok in picks:
            self._take(job, tok)

    def _take(self, job: _Job, tok: int) -> None:
        """create_completion's per-token rules: end of turn, multibyte hold-back, stop strings, max_tokens."""
        assert job.tokens is not None
        llm = self.loaded.llm
        if self.lc.llama_vocab_is_eog(self.vocab, tok):
            return self._finish(job, llm.detokenize(job.out, prev_tokens=job.tokens), "stop")
        job.out.append(tok)
        text = llm.detokenize(job.out, prev_tokens=job.tokens)
        for k, char in enumerate(text[-3:]):
            k = 3 - k
            for num, pattern in _MULTIBYTE:
                if num > k and pattern & char == pattern:
                    job.multibyte_fix = num - k
        if job.multibyte_fix > 0:
            job.multibyte_fix -= 1
            if len(job.tokens) + len(job.out) < self.n_ctx:
                return None
            return self._finish(job, text, "length")
        cuts = [s for s in job.stops if s in text]
        if cuts:
            return self._finish(job, text[: text.index(cuts[0])], "stop")
        if len(job.out) >= job.max_tokens:
            return self._finish(job, text, "length")
        return None

    def _finish(self, job: _Job, text: bytes, reason: str) -> None:
        assert self.ctx.memory is not None
        prefix = getattr(self.loaded, "prefix", None)
        if prefix is not None and job.tokens is not None:  # kept for later calls sharing this prompt's prefix
            with self.loaded.lock:
                prefix.keep_from(self.ctx.ctx, job.seq, job.tokens + job.out)
        self.lc.llama_memory_seq_rm(self.ctx.memory, job.seq, -1, -1)
        self.free_seqs.append(job.seq)
        self.active.remove(job)
        job.result = (text, len(job.out), reason)
        job.done.set()


_GATES: dict[tuple[str, int], _Gate] = {}
_GATES_LOCK = threading.Lock()


def gate_for(loaded: _Loaded, sampler: dict[str, Any]) -> _Gate:
    with _GATES_LOCK:
        key = (loaded.path, loaded.n_ctx)
        if key not in _GATES:
            _GATES[key] = _Gate(loaded, parallel(), sampler)
        return _GATES[key]


def complete(backend: EmbeddedBackend, messages: Sequence[Message], params: GenParams,
             alone: Callable[[Sequence[Message], GenParams], Completion], sampler: dict[str, Any]) -> Completion:
    """`alone(messages, params)` (the backend's own path) for a lone call; decoded with other waiting calls else.
    `sampler`: the backend's sampler settings (top_k, top_p, min_p, typical_p, repeat_penalty)."""
    if params.logprobs or params.tools or params.max_tokens < 1 or parallel() < 2:
        return alone(messages, params)
    backend.load()
    loaded = backend._loaded
    assert loaded is not None
    gate = gate_for(loaded, sampler)
    if not gate.take_if_idle():
        job = _prepare(backend, loaded, messages, params)
        if not gate.wait_turn(job):
            if job.error is not None:
                raise job.error
            assert job.result is not None and job.tokens is not None
            text, n_out, finish = job.result
            return Completion(text=text.decode("utf-8", errors="ignore"), usage=Usage(len(job.tokens), n_out),
                              logprobs=None, finish_reason=finish,
                              extra={"seed": job.seed, "prompt_format": backend.prompt_format,
                                     "input_tokens_evaluated": job.evaluated})
    try:
        return alone(messages, params)
    finally:
        gate.release()


def _prepare(backend: EmbeddedBackend, loaded: _Loaded, messages: Sequence[Message], params: GenParams) -> _Job:
    """The call as a batch job, or a job only the backend's own path serves (it raises that path's errors)."""
    try:
        prompt, add_bos = backend.render(messages)
    except Exception:  # noqa: BLE001 - the backend's own path reports it
        return _Job(tokens=None)
    # llama_tokenize reads only the vocabulary, not a context: no need to wait for the model's lock
    tokens = list(loaded.llm.tokenize(prompt.encode("utf-8"), add_bos=add_bos, special=True))
    if len(tokens) >= loaded.n_ctx:
        return _Job(tokens=None)
    seed = params.seed if params.seed is not None else random.SystemRandom().randrange(2**31)  # as alone draws it
    n = params.max_tokens if params.max_tokens + len(tokens) < loaded.n_ctx else loaded.n_ctx - len(tokens)
    return _Job(tokens=tokens, max_tokens=n, temperature=max(0.0, float(params.temperature)),
                seed=seed, llama_seed=seed % 0xFFFFFFFF, stops=tuple(s.encode("utf-8") for s in params.stop if s))
