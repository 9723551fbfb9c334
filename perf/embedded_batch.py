"""Performance benchmark: decoding k sequences at once in one llama.cpp context on the embedded model.

The same four (or --prompts, rounded up to a multiple of k) different ~300-token chat prompts are decoded greedily at
each k: k = 1 decodes them one after another, k = 2 two at a time, and so on. A group's prompts are evaluated one by
one (each samples its first token as soon as its prompt is in), then the group's sequences are decoded together, one
token of each per `llama_decode` (llama-cpp-python's low-level API: a batch with one seq_id per sequence, a sampler
chain per sequence, built as `Llama` builds it). `today` is the embedded backend's own path for the same prompts, one
`complete` call after another. Trials alternate over the ks, `--repeat` rounds; per k: aggregate output tok/s (all
generated tokens / wall) and mean time to first token (from its group's start), median and range, and their ratios to
k = 1 within each round. Each sequence's greedy tokens at k > 1 are compared with its k = 1 tokens.

`--steps N` times the generation step alone instead: N steps at each k, interleaved step by step (robust to a
machine whose load drifts), per k the median step time and decode tok/s = k / step time.

Usage: python perf/embedded_batch.py [--model qwen2.5-coder-0.5b-instruct] [--ks 1,2,3,4] [--repeat 3]
       [--max-tokens 96] [--steps N] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evoarena.models import GenParams, Message
from evoarena.models.embedded import EmbeddedBackend, _import_llama_cpp
from evoarena.spec import ModelSpec

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [f"src/evoarena/{m}.py" for m in (
    "codec", "models/ledger", "models/cache", "models/shipped", "models/openai_backend", "spec", "models/base",
    "models/scripted", "models/factory", "models/halt", "models/tooling", "models/embedded")]


@dataclass
class Trial:
    wall: float
    ttft: list[float]
    tokens: list[list[int]]

    @property
    def tok_s(self) -> float:
        return sum(len(t) for t in self.tokens) / self.wall


def prompts(backend: EmbeddedBackend, n: int, size: int) -> list[list[int]]:
    """n chat prompts of about `size` tokens: the start of a different source file each, to be explained."""
    llm = backend._loaded.llm  # type: ignore[union-attr]
    out = []
    for rel in SOURCES[:n]:
        body = llm.detokenize(llm.tokenize((ROOT / rel).read_bytes(), add_bos=False)[:size]).decode("utf-8", "ignore")
        messages = [Message("system", "You are a careful senior Python reviewer."),
                    Message("user", f"Explain, step by step, what this Python module does:\n\n{body}")]
        text, add_bos = backend.render(messages)
        out.append(list(llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)))
    return out


class Batched:
    """One llama.cpp context with n_seq_max = k on the backend's loaded model; greedy decoding of k sequences."""

    def __init__(self, backend: EmbeddedBackend, k: int, per_seq: int) -> None:
        self.lc = _import_llama_cpp()
        from llama_cpp import _internals

        self.internals = _internals
        llm = backend._loaded.llm  # type: ignore[union-attr]
        self.llm = llm
        params = type(llm.context_params).from_buffer_copy(llm.context_params)
        params.n_ctx = per_seq * k
        params.n_seq_max = k
        self.ctx = _internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.n_batch = int(params.n_batch)
        self.batch = _internals.LlamaBatch(n_tokens=self.n_batch, embd=0, n_seq_max=1, verbose=False)
        self.vocab = self.lc.llama_model_get_vocab(llm.model)

    def _sampler(self) -> Any:
        sampler = self.internals.LlamaSampler()  # greedy, as Llama._init_sampler builds it at temperature 0
        sampler.add_penalties(n_vocab=self.llm.n_vocab(), penalty_last_n=self.llm.last_n_tokens_size,
                              penalty_repeat=1.0, penalty_freq=0.0, penalty_present=0.0)
        sampler.add_greedy()
        return sampler

    def _decode(self, items: list[tuple[int, int, int, bool]]) -> None:
        """items: (token, pos, seq_id, wants logits)."""
        b = self.batch.batch
        b.n_tokens = len(items)
        for i, (tok, pos, seq, logits) in enumerate(items):
            b.token[i], b.pos[i], b.seq_id[i][0], b.n_seq_id[i], b.logits[i] = tok, pos, seq, 1, logits
        rc = self.lc.llama_decode(self.ctx.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")

    def run(self, group: list[list[int]], max_tokens: int) -> tuple[list[float], list[list[int]]]:
        self.ctx.kv_cache_clear()
        start = time.perf_counter()
        samplers = [self._sampler() for _ in group]
        ttft: list[float] = []
        out: list[list[int]] = [[] for _ in group]
        pos = [len(p) for p in group]
        for seq, prompt in enumerate(group):  # prompts one by one, each in n_batch chunks
            for at in range(0, len(prompt), self.n_batch):
                chunk = prompt[at:at + self.n_batch]
                self._decode([(t, at + i, seq, at + i == len(prompt) - 1) for i, t in enumerate(chunk)])
            out[seq].append(samplers[seq].sample(self.ctx, len(chunk) - 1))
            ttft.append(time.perf_counter() - start)
        live = [s for s in range(len(group)) if not self.lc.llama_vocab_is_eog(self.vocab, out[s][-1])]
        for s in range(len(group)):
            if s not in live:
                out[s].pop()
        while live:
            live = [s for s in live if len(out[s]) < max_tokens]
            if not live:
                break
            self._decode([(out[s][-1], pos[s] + len(out[s]) - 1, s, True) for s in live])
            still = []
            for j, s in enumerate(live):
                tok = samplers[s].sample(self.ctx, j)
                if self.lc.llama_vocab_is_eog(self.vocab, tok):
                    continue
                out[s].append(tok)
                still.append(s)
            live = still
        return ttft, out


def trial_batched(engine: Batched, ps: list[list[int]], k: int, max_tokens: int) -> Trial:
    start = time.perf_counter()
    ttft: list[float] = []
    tokens: list[list[int]] = []
    for at in range(0, len(ps), k):
        t, o = engine.run(ps[at:at + k], max_tokens)
        ttft += t
        tokens += o
    return Trial(time.perf_counter() - start, ttft, tokens)


def step_times(engine: Batched, ps: list[list[int]], ks: list[int], steps: int) -> dict[int, list[float]]:
    """Seconds of one generation step (one llama_decode of one token for each of k sequences), the ks interleaved
    step by step so that the machine's load drifts alike over all of them; the prompts are read first."""
    engine.ctx.kv_cache_clear()
    pos = []
    for seq, prompt in enumerate(ps[:max(ks)]):
        engine._decode([(t, i, seq, i == len(prompt) - 1) for i, t in enumerate(prompt)])
        pos.append(len(prompt))
    times: dict[int, list[float]] = {k: [] for k in ks}
    for r in range(steps):
        for k in ks if r % 2 == 0 else ks[::-1]:
            start = time.perf_counter()
            engine._decode([(198, pos[s], s, True) for s in range(k)])
            times[k].append(time.perf_counter() - start)
            for s in range(k):
                pos[s] += 1
    return times


def trial_today(backend: EmbeddedBackend, ps: list[list[int]], max_tokens: int) -> Trial:
    """The embedded backend's create_completion path, one prompt after another (TTFT not observable: NaN)."""
    llm = backend._loaded.llm  # type: ignore[union-attr]
    start = time.perf_counter()
    tokens = []
    for p in ps:
        llm.reset()  # no prefix reuse between different prompts, as in the batched trials
        out = llm.create_completion(p, max_tokens=max_tokens, temperature=0.0, top_k=0, top_p=1.0, min_p=0.0,
                                    typical_p=1.0, repeat_penalty=1.0)
        tokens.append(llm.tokenize(out["choices"][0]["text"].encode("utf-8"), add_bos=False, special=True))
    return Trial(time.perf_counter() - start, [float("nan")] * len(ps), tokens)


def span(xs: list[float]) -> str:
    return f"{statistics.median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--ks", default="1,2,3,4")
    parser.add_argument("--prompts", type=int, default=4, help="prompts per trial (rounded up to a multiple of k)")
    parser.add_argument("--prompt-tokens", type=int, default=280, help="source tokens per prompt (+ ~40 of chat)")
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-today", action="store_true", help="skip the backend's own path")
    parser.add_argument("--steps", type=int, default=0,
                        help="instead of whole calls: time N interleaved generation steps at each k")
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run")
    args = parser.parse_args()
    if args.smoke:
        args.prompt_tokens, args.max_tokens, args.repeat = 40, 8, 1
    ks = [int(k) for k in args.ks.split(",")]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"machine: nproc {os.cpu_count()}, load average {os.getloadavg()}, commit {commit}, model {args.model}")
    backend = EmbeddedBackend(ModelSpec(backend="embedded", model=args.model, n_ctx=2048))
    backend.load()
    ps = prompts(backend, max(-(-args.prompts // k) * k for k in ks), args.prompt_tokens)
    print(f"prompt tokens: {[len(p) for p in ps]}, max_tokens {args.max_tokens}, threads "
          f"{backend._loaded.llm.context_params.n_threads}")  # type: ignore[union-attr]
    per_seq = -(-(max(len(p) for p in ps) + args.max_tokens + 16) // 256) * 256  # llama.cpp pads n_ctx to 256
    if args.steps:
        times = step_times(Batched(backend, max(ks), per_seq + args.steps * 2), ps, ks, args.steps)
        print(f"load average after: {os.getloadavg()}")
        print("| k | step ms (median, IQR) | decode tok/s | ratio to k=1 |")
        print("|---|---|---|---|")
        one = statistics.median(times[ks[0]])
        for k in ks:
            q = statistics.quantiles(times[k], n=4)
            med = statistics.median(times[k])
            print(f"| {k} | {med * 1e3:.1f} ({q[0] * 1e3:.1f}–{q[2] * 1e3:.1f}) | {k / med:.1f} | "
                  f"{k / med / (ks[0] / one):.2f} |")
        return
    engines = {k: Batched(backend, k, per_seq) for k in ks}
    backend.complete([Message("user", "hi")], GenParams(temperature=0.0, max_tokens=4))  # warm up
    engines[ks[0]].run(ps[:1], 4)
    names = [f"k={k}" for k in ks] + ([] if args.no_today else ["today"])
    trials: dict[str, list[Trial]] = {n: [] for n in names}
    for r in range(args.repeat):
        order = names if r % 2 == 0 else names[::-1]  # alternate, so drift in the machine's load hits all alike
        for name in order:
            if name == "today":
                trials[name].append(trial_today(backend, ps[:args.prompts], args.max_tokens))
            else:
                k = int(name[2:])
                trials[name].append(trial_batched(engines[k], ps[:-(-args.prompts // k) * k], k, args.max_tokens))
            t = trials[name][-1]
            print(f"  round {r} {name}: {t.wall:.2f} s, {t.tok_s:.2f} tok/s, "
                  f"{sum(len(x) for x in t.tokens)} tokens", flush=True)
    base = trials[names[0]]
    print(f"\nload average after: {os.getloadavg()}")
    print("| k | aggregate tok/s | ratio to k=1 | mean TTFT s | TTFT ratio to k=1 |")
    print("|---|---|---|---|---|")
    for name in names:
        ts = trials[name]
        ratio = [t.tok_s / b.tok_s for t, b in zip(ts, base, strict=True)]
        ttft = [statistics.mean(t.ttft) for t in ts]
        tratio = [a / statistics.mean(b.ttft) for a, b in zip(ttft, base, strict=True)]
        print(f"| {name} | {span([t.tok_s for t in ts])} | {span(ratio)} | {span(ttft)} | {span(tratio)} |")
    ref = trials[names[0]][0].tokens
    for name in names[1:]:
        for i, (a, b) in enumerate(zip(ref, trials[name][0].tokens, strict=False)):
            same = a == b
            first = next((j for j, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
            print(f"{name} seq {i}: {'identical' if same else f'differs from token {first}'} "
                  f"({len(a)} vs {len(b)} tokens)")
    llm = backend._loaded.llm  # type: ignore[union-attr]
    for name in names[1:]:
        stable = all(t.tokens == trials[name][0].tokens for t in trials[name])
        print(f"{name}: tokens the same in every round: {stable}")
    print("\nk=1 seq 0:", repr(llm.detokenize(ref[0]).decode("utf-8", "ignore")[:200]))


if __name__ == "__main__":
    main()
