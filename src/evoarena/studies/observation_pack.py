"""ObservationPack replayed over hand-built tool outputs (seed 000 §10's first, model-free experiment): over 100
context sends, how many bytes of tool output do the requests carry with the pack against without it, does every
large output go whole twice and then as its handle, and does paged recall give back every stored output exactly?

A context send is one model request, and it carries the whole history, as an agent's requests do; so an output that
arrived at request k is in every request from k on (100 − k + 1 sends). Before each request the agent's last tool
call returns one output: with probability `repeat_share` (0.3) the same as an earlier one (a re-read file, a re-run
command), else a fresh one whose size class is drawn first — small (80 B–4 KiB, 60 %), medium (4–10 KiB, 20 %) or
large (10–48 KiB, 20 %). The outputs are built, not recorded: pytest sessions, compiler logs (gcc's ‘quotes’), source
files with non-ASCII comments, grep hits, JSON records (names in several scripts, emoji), directory listings.

Two keyings (what "the same output" is, docs/runtime.md): `call`, the released extension's — every output message is
its own observation (its tool-call id is the source); `content` — the same text from the same tool is one observation
wherever it sits in the history. Recall is checked after the replay by reading every stored output back page by page.
No model is called; the study measures traffic and exactness, not whether an agent does as well with placeholders.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
from dataclasses import dataclass

from evoarena.codec import to_plain
from evoarena.runtime import FULL_SENDS, ObservationPack
from evoarena.runtime.text import estimate_tokens, utf8_len

SIZE_CLASSES = (("small", 0.60, 80, 4 * 1024), ("medium", 0.20, 4 * 1024, 10 * 1024),
                ("large", 0.20, 10 * 1024, 48 * 1024))
_NAMES = ("Zoë", "José", "Łukasz", "東京", "Ærøskøbing", "Ωmega", "naïve", "Δelta", "café", "🎉party")


def _pytest(rng: random.Random, target: int) -> str:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.9, pytest-8.2.0, pluggy-1.5.0", "rootdir: /work/repo", ""]
    i, size = 0, sum(len(x) + 1 for x in lines)
    while size < target:
        n = len(lines)
        verdict = "FAILED" if rng.random() < 0.04 else "PASSED"
        lines.append(f"tests/test_mod{i // 40:02d}.py::test_case_{i:04d}[{rng.randrange(1000)}] {verdict}")
        if verdict == "FAILED":
            lines += ["    def test_case():", f">       assert compute({i}) == {i + 1}",
                      f"E       assert {i} == {i + 1}", "E        +  where compute = parser.compute"]
        size += sum(len(x) + 1 for x in lines[n:])
        i += 1
    lines.append(f"======================= {i} tests in {rng.uniform(1, 90):.2f}s ========================")
    return "\n".join(lines) + "\n"


def _build(rng: random.Random, target: int) -> str:
    lines: list[str] = []
    i = size = 0
    while size < target:
        n = len(lines)
        lines.append(f"gcc -O2 -Wall -Iinclude -c src/unit_{i:03d}.c -o build/unit_{i:03d}.o")
        if rng.random() < 0.3:
            lines.append(f"src/unit_{i:03d}.c:{rng.randrange(1, 400)}:{rng.randrange(1, 40)}: warning: unused "
                         f"variable ‘tmp{rng.randrange(9)}’ [-Wunused-variable]")
        size += sum(utf8_len(x) + 1 for x in lines[n:])
        i += 1
    lines.append(f"[100%] Linking C executable app ({i} objects)")
    return "\n".join(lines) + "\n"


def _source(rng: random.Random, target: int) -> str:
    lines = ['"""Größe und Gewicht — 中文注释 — ✓ checked."""', ""]
    i, size = 0, sum(utf8_len(x) + 1 for x in lines)
    while size < target:
        name = rng.choice(_NAMES)
        new = [f"def fn_{i}(x: int) -> int:", f'    """For {name}: returns x × {i} (naïve)."""',
               f"    return x * {i}  # ok ✓", ""]
        lines += new
        size += sum(utf8_len(x) + 1 for x in new)
        i += 1
    return "\n".join(lines) + "\n"


def _search(rng: random.Random, target: int) -> str:
    lines: list[str] = []
    size = 0
    while size < target:
        lines.append(f"src/pkg/mod_{rng.randrange(60):02d}.py:{rng.randrange(1, 900)}:    result = parse(token, "
                     f"depth={rng.randrange(8)})")
        size += len(lines[-1]) + 1
    return "\n".join(lines) + "\n"


def _records(rng: random.Random, target: int) -> str:
    rows: list[str] = []
    size = 0
    while size < target:
        row = {"id": len(rows), "name": rng.choice(_NAMES), "score": round(rng.random(), 4)}
        rows.append(json.dumps(row, ensure_ascii=False))
        size += utf8_len(rows[-1]) + 2
    return "[\n" + ",\n".join(rows) + "\n]\n"


def _listing(rng: random.Random, target: int) -> str:
    lines: list[str] = []
    size = 0
    while size < target:
        lines.append(f"-rw-r--r-- 1 agent agent {rng.randrange(100, 99_999):>6} Mar  3 12:{rng.randrange(60):02d} "
                     f"file_{len(lines):04d}.txt")
        size += len(lines[-1]) + 1
    return "\n".join(lines) + "\n"


TOOLS = {"pytest": _pytest, "build": _build, "read_file": _source, "search": _search, "query": _records,
         "ls": _listing}


def fresh_output(rng: random.Random) -> tuple[str, str]:
    """(source, text) of one hand-built tool output, its size class drawn first."""
    r, acc = rng.random(), 0.0
    lo, hi = SIZE_CLASSES[-1][2:]
    for _, share, a, b in SIZE_CLASSES:
        acc += share
        if r < acc:
            lo, hi = a, b
            break
    tool = rng.choice(sorted(TOOLS))
    return tool, TOOLS[tool](rng, rng.randrange(lo, hi))


KEYINGS = ("call", "content")


@dataclass(frozen=True)
class Replay:
    """One session replayed under one keying. Bytes are UTF-8 and count tool outputs only (what the pack acts on);
    tokens are the released estimate (characters / 4). `raw_bytes`: what the requests would carry without the pack
    (every output in the history, every request); `sent_bytes`: what they carry with it. `rule_violations`: sends of
    a large output that were not whole within its first two sends and its handle after; `recall_exact`: stored
    outputs whose pages, joined, have the original's SHA-256; `multibyte_boundaries`: page boundaries with a
    non-ASCII character on either side (where a byte-level cut could have split one); `recall_bytes`: reading every
    stored output back once in full."""

    keying: str
    seed: int
    requests: int
    outputs: int
    distinct_outputs: int
    large_outputs: int
    raw_bytes: int
    sent_bytes: int
    raw_tokens: int
    sent_tokens: int
    full_sends: int
    handle_sends: int
    passthrough_sends: int
    passthrough_bytes: int
    rule_violations: int
    stored: int
    pages: int
    recall_exact: int
    multibyte_boundaries: int
    recall_bytes: int

    @property
    def sent_fraction(self) -> float:
        return self.sent_bytes / self.raw_bytes if self.raw_bytes else 1.0

    def row(self) -> dict[str, object]:
        """Its plain form with what it derives, as `evoarena study --json` prints it."""
        return {**to_plain(self), "sent_fraction": round(self.sent_fraction, 4)}


def session(seed: int = 0, requests: int = 100, repeat_share: float = 0.3) -> list[tuple[str, str]]:
    """The seeded session: before each request the agent's last tool call returns one output (source, text), with
    probability `repeat_share` the same as an earlier one (a re-read file, a re-run command), else a fresh one."""
    if requests < 1 or not 0 <= repeat_share <= 1:
        raise ValueError("requests must be >= 1 and repeat_share in [0, 1]")
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for _ in range(requests):
        out.append(rng.choice(out) if out and rng.random() < repeat_share else fresh_output(rng))
    return out


def replay(seed: int = 0, requests: int = 100, repeat_share: float = 0.3, keying: str = "call",
           pack: ObservationPack | None = None) -> Replay:
    """Replay the seeded session through `pack` (default: the seed's settings): request k carries outputs 1..k.
    `keying`: "call" — each output message is its own observation (the released extension: tool-call id as the
    source); "content" — the same text from the same tool is one observation wherever it sits in the history."""
    if keying not in KEYINGS:
        raise ValueError(f"keying must be one of {KEYINGS}, got {keying!r}")
    history = session(seed, requests, repeat_share)
    pack = pack or ObservationPack()
    raw_tokens = sent_tokens = violations = passthrough_bytes = 0
    for k in range(1, len(history) + 1):
        for i, (tool, text) in enumerate(history[:k]):
            out = pack.send(text, source=f"{tool}#{i}" if keying == "call" else tool)
            raw_tokens += estimate_tokens(text)
            sent_tokens += estimate_tokens(out.text)
            if out.kind == "passthrough":
                passthrough_bytes += out.sent_bytes
            else:
                expected = "full" if out.send_number <= pack.full_sends else "handle"
                violations += out.kind != expected or (out.kind == "full") != (out.text == text)
    exact = boundaries = pages = 0
    before = pack.stats.recall_bytes
    for handle in pack.handles():
        parts = [pack.recall(handle, p).text for p in range(pack.pages(handle))]
        pages += len(parts)
        exact += hashlib.sha256("".join(parts).encode("utf-8")).hexdigest() == pack.sha256(handle)
        boundaries += sum(1 for a, b in zip(parts, parts[1:], strict=False) if not (a[-1].isascii() and b[0].isascii()))
    s = pack.stats
    large = {(t, x) for t, x in history if utf8_len(x) > pack.threshold_bytes}
    return Replay(keying, seed, requests, len(history), len(set(history)), len(large), s.raw_bytes, s.sent_bytes,
                  raw_tokens, sent_tokens, s.full, s.placeholders, s.passthrough, passthrough_bytes, violations,
                  s.stored, pages, exact, boundaries, s.recall_bytes - before)


def study(seeds: int = 1, requests: int = 100, repeat_share: float = 0.3) -> list[Replay]:
    """Both keyings on seeds 0 .. seeds - 1."""
    return [replay(seed, requests, repeat_share, keying) for keying in KEYINGS for seed in range(seeds)]


def table(rows: list[Replay]) -> str:
    """A plain-text table, one row per (keying, seed)."""
    head = (f"{'keying':<7} {'seed':>4} {'outputs':>7} {'>10KiB':>6} {'raw MiB':>8} {'sent MiB':>8} {'sent/raw':>8} "
            f"{'full':>5} {'handle':>6} {'rule viol.':>10} {'recall exact':>12} {'mb bounds':>9}")
    lines = [f"ObservationPack over {rows[0].requests if rows else 0} context sends (> 10 KiB whole {FULL_SENDS}x, "
             "then handle + ~1 KiB excerpt; model-free)", head]
    for r in rows:
        lines.append(f"{r.keying:<7} {r.seed:>4} {r.outputs:>7} {r.large_outputs:>6} {r.raw_bytes / 2**20:>8.2f} "
                     f"{r.sent_bytes / 2**20:>8.2f} {r.sent_fraction:>8.3f} {r.full_sends:>5} {r.handle_sends:>6} "
                     f"{r.rule_violations:>10} {f'{r.recall_exact}/{r.stored}':>12} {r.multibyte_boundaries:>9}")
    for keying in KEYINGS:
        fr = [r.sent_fraction for r in rows if r.keying == keying]
        if len(fr) > 1:
            lines.append(f"{keying}: sent/raw mean {statistics.fmean(fr):.3f} over {len(fr)} seeds "
                         f"(min {min(fr):.3f}, max {max(fr):.3f})")
    return "\n".join(lines)
