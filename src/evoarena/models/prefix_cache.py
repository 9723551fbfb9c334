"""Token-prefix KV states for the embedded backend, so prompts that share a prefix are evaluated once.

A run with several cells in flight interleaves their calls on one llama.cpp context: each cell's system prompt,
playbook or skill would be re-evaluated whenever another cell's call came in between. After each call the context's
KV for sequence 0 is kept here (llama.cpp's per-sequence state: the KV cells only, no logits), keyed by the tokens
it holds; before a call, the entry sharing the longest prefix with the new prompt is restored when it shares more
than the context does, and llama-cpp-python's own prefix match then evaluates only the rest.

Bounded by bytes (least recently used first out). An entry whose tokens are mostly a prefix of a newer one's is
dropped when the newer one is kept: the newer covers what it would have saved.
"""

from __future__ import annotations

import ctypes
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CACHE_ENV = "EVOARENA_EMBEDDED_PREFIX_MB"  # bytes kept for prefix states, in MB; 0 turns reuse across calls off
DEFAULT_MB = 1024
MIN_GAIN = 4  # restore a kept state only when it saves at least this many tokens over what the context holds
MIN_TOKENS = 32  # shorter contexts are not worth keeping: re-evaluating them costs about as much as restoring


def capacity_bytes() -> int:
    """The prefix cache's bound from EVOARENA_EMBEDDED_PREFIX_MB (default 1024 MB; 0 = off)."""
    raw = os.environ.get(CACHE_ENV, "").strip()
    if not raw:
        return DEFAULT_MB << 20
    try:
        mb = int(raw)
    except ValueError:
        raise RuntimeError(f"{CACHE_ENV} must be a whole number of MB (0 = off), got {raw!r}") from None
    if mb < 0:
        raise RuntimeError(f"{CACHE_ENV} must be >= 0, got {mb}")
    return mb << 20


def shared_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` have in common."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True)
class PrefixState:
    """The KV of one sequence (llama_state_seq_get_data) after evaluating `tokens`, and the kind of context it came
    from: llama.cpp loads a sequence's state only into a context with as many KV streams ("n_stream mismatch"), so the
    model's own context ("own", one stream) and the batch decoder's ("batch", one stream per sequence) each restore
    their own kind."""

    tokens: tuple[int, ...]
    kv: bytes
    origin: str = "own"


class PrefixCache:
    """Least-recently-used prefix states, bounded by `capacity` bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[tuple[str, tuple[int, ...]], PrefixState] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def longest(self, tokens: Sequence[int], *, origin: str = "own") -> tuple[PrefixState | None, int]:
        """The entry of `origin` sharing the longest prefix with `tokens` (most recent among equals), and that
        length."""
        best: PrefixState | None = None
        best_n = 0
        for state in reversed(self._entries.values()):
            if state.origin != origin:
                continue
            n = shared_prefix(state.tokens, tokens)
            if n > best_n:
                best, best_n = state, n
        if best is not None:
            self._entries.move_to_end((best.origin, best.tokens))
        return best, best_n

    def put(self, state: PrefixState) -> None:
        """Keep `state`; drop entries of its origin it mostly covers (half or more of their tokens are its prefix),
        then the least recently used until the bound holds. A state larger than the bound is not kept."""
        if len(state.kv) > self.capacity or len(state.tokens) < MIN_TOKENS:
            return
        for key, old in list(self._entries.items()):
            if old.origin == state.origin and shared_prefix(key[1], state.tokens) * 2 >= len(key[1]):
                self._drop(key)
        self._entries[(state.origin, state.tokens)] = state
        self._bytes += len(state.kv)
        while self._bytes > self.capacity:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: tuple[str, tuple[int, ...]]) -> None:
        self._bytes -= len(self._entries.pop(key).kv)


def sequence_kv(ctx: Any, seq: int) -> bytes:
    """The KV of sequence `seq` of a llama.cpp context (llama_state_seq_get_data)."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(ctx, seq)
    buf = (ctypes.c_uint8 * size)()
    got = llama_cpp.llama_state_seq_get_data(ctx, buf, size, seq)
    return ctypes.string_at(buf, got)


def load_sequence_kv(ctx: Any, kv: bytes, seq: int) -> bool:
    """Put KV saved by `sequence_kv` into sequence `seq` of a context of the same model; False when refused."""
    import llama_cpp

    buf = (ctypes.c_uint8 * len(kv)).from_buffer_copy(kv)
    return bool(llama_cpp.llama_state_seq_set_data(ctx, buf, len(kv), seq) == len(kv))


def save_sequence(llm: Any) -> PrefixState:
    """The `Llama`'s sequence 0 as it stands: the tokens it has evaluated and their KV."""
    return PrefixState(tokens=tuple(int(t) for t in llm._input_ids.tolist()), kv=sequence_kv(llm._ctx.ctx, 0))


def restore_sequence(llm: Any, state: PrefixState) -> bool:
    """Put `state` into the `Llama`'s context as sequence 0, replacing what was there; the next `generate` matches
    the new prompt against `state.tokens` and evaluates only what follows the shared prefix. False (the context left
    empty, the whole prompt to evaluate) when llama.cpp refuses the state."""
    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    if not load_sequence_kv(llm._ctx.ctx, state.kv, 0):
        llm.reset()
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        return False
    n = len(state.tokens)
    llm.input_ids[:n] = state.tokens
    llm.n_tokens = n
    llm._requires_eval = True  # the logits are not restored: at least one token is evaluated before sampling
    return True


def held_prefix(llm: Any, tokens: Sequence[int]) -> int:
    """How many leading tokens of `tokens` the `Llama`'s context holds already."""
    return shared_prefix(llm._input_ids.tolist(), tokens) if llm.n_tokens > 0 else 0


def tokens_to_evaluate(llm: Any, tokens: Sequence[int], held: int | None = None) -> int:
    """How many of `tokens` llama-cpp-python's `generate` will evaluate given what the context holds (it keeps the
    shared prefix, and re-evaluates one token when the whole prompt is held but its logits are not live). `held`:
    `held_prefix(llm, tokens)` when the caller has it."""
    n = held_prefix(llm, tokens) if held is None else held
    if n == len(tokens) == llm.n_tokens and not llm._requires_eval:
        return 0
    return len(tokens) - (n - 1 if n == len(tokens) else n)


class PrefixReuse:
    """One model context's prefix policy: before a call restore the best kept prefix, after it keep the context."""

    def __init__(self, capacity: int | None = None) -> None:
        self.cache = PrefixCache(capacity_bytes() if capacity is None else capacity)

    @property
    def enabled(self) -> bool:
        return self.cache.capacity > 0

    def before(self, llm: Any, tokens: Sequence[int]) -> int:
        """Restore the kept state sharing the most with `tokens` if it beats the context's own; return how many
        prompt tokens will be evaluated."""
        held = held_prefix(llm, tokens)
        if self.enabled:
            state, n = self.cache.longest(tokens)
            if state is not None and n >= held + MIN_GAIN:
                held = n if restore_sequence(llm, state) else 0  # a refused state leaves the context empty
        return tokens_to_evaluate(llm, tokens, held)

    def restore_into(self, ctx: Any, seq: int, tokens: Sequence[int]) -> int:
        """Restore the kept state sharing the most with `tokens` into sequence `seq` of another context of the same
        model (an empty one: the batch decoder's), cut to that shared prefix but for the last prompt token, whose
        logits must be computed; return how many prompt tokens it holds (0: nothing restored)."""
        if not self.enabled:
            return 0
        state, n = self.cache.longest(tokens, origin="batch")
        if state is None or n < MIN_GAIN:
            return 0
        import llama_cpp

        keep = min(n, len(tokens) - 1)
        memory = llama_cpp.llama_get_memory(ctx)
        if not load_sequence_kv(ctx, state.kv, seq):
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            return 0
        llama_cpp.llama_memory_seq_rm(memory, seq, keep, -1)
        return keep

    def keep_from(self, ctx: Any, seq: int, tokens: Sequence[int]) -> None:
        """Keep sequence `seq` of another context (its KV holds the first tokens of `tokens`) for later calls."""
        if not self.enabled:
            return
        import llama_cpp

        held = int(llama_cpp.llama_memory_seq_pos_max(llama_cpp.llama_get_memory(ctx), seq)) + 1
        if held >= MIN_TOKENS:
            self.cache.put(PrefixState(tokens=tuple(int(t) for t in tokens[:held]), kv=sequence_kv(ctx, seq),
                                       origin="batch"))

    def after(self, llm: Any) -> None:
        """Keep the context's sequence 0 (prompt and completion) for later calls."""
        if self.enabled and llm.n_tokens >= MIN_TOKENS:
            self.cache.put(save_sequence(llm))
