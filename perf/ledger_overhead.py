"""Performance benchmark: what the ledger (cache lookup, retries wrapper, SQLite row) costs per call.

Runs the scripted backend directly and through `RoleModel`, cold (miss, then stored) and warm (cache
hit), and reports calls/s and the ratio against the bare backend measured in the same run.
Usage: python perf/ledger_overhead.py [--calls 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from evoarena.models import GenParams, Message, ResponseCache, RoleModel, ScriptedBackend
from evoarena.spec import ModelSpec
from evoarena.store import RunStore


def rate(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return n / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=2000)
    n = ap.parse_args().calls
    backend = ScriptedBackend("echo", lambda messages, params: "ok " + messages[-1].content)
    params = GenParams()
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "run")
        model = RoleModel(role="solver", model_name="echo", backend=backend,
                          spec=ModelSpec(backend="scripted", model="echo"), store=store,
                          cache=ResponseCache(Path(tmp) / "cache.sqlite"))

        def msgs(i: int) -> list[Message]:
            return [Message("user", f"question {i}")]

        bare = rate(lambda i: backend.complete(msgs(i), params), n)
        cold = rate(lambda i: model.complete(msgs(i)), n)
        warm = rate(lambda i: model.complete(msgs(i)), n)
    print(f"{'path':<22}{'calls/s':>12}{'vs bare':>10}")
    for name, r in (("bare backend", bare), ("ledger, cache miss", cold), ("ledger, cache hit", warm)):
        print(f"{name:<22}{r:>12.0f}{r / bare:>10.3f}")


if __name__ == "__main__":
    main()
