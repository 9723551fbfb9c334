"""Running a solver-written CLR program in the sandbox on many record sets at once.

Contract (told to the solver): the program defines `solve(records: list[dict]) -> dict[str, int]`, the count
of records per entity after applying the rules. Everything else about the answer (largest total in practice,
sum of totals in test) is computed by the grader, so one program serves practice, test and diagnostics.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from evoarena.benchmarks.clr.cells import Records
from evoarena.sandbox import SandboxLimits, run_python

MARK = "@@EVOARENA-RESULTS@@"
_DRIVER = f"""
import json, sys
try:
    import solution
    solve = solution.solve
except BaseException as e:
    print({MARK!r} + json.dumps({{"load_error": (type(e).__name__ + ": " + str(e))[:500]}}))
    raise SystemExit(0)
out = []
for records in json.loads(sys.stdin.read()):
    try:
        totals = solve(records)
        out.append({{"totals": {{str(k): int(v) for k, v in dict(totals).items()}}}})
    except BaseException as e:
        out.append({{"error": (type(e).__name__ + ": " + str(e))[:300]}})
print({MARK!r} + json.dumps({{"results": out}}))
"""


@dataclass(frozen=True)
class ProgramRun:
    """Per input: the totals the program returned, or None (then `errors[i]` says why)."""

    totals: list[dict[str, int] | None]
    errors: list[str | None]
    isolation: str
    failure: str | None = None  # the whole run failed (syntax error, timeout, crash)


_RUNS: OrderedDict[str, ProgramRun] = OrderedDict()
_RUNS_LOCK = threading.Lock()
_RUNS_MAX = 4096


def run_program(program: str, inputs: list[Records], limits: SandboxLimits | None = None) -> ProgramRun:
    """Run `program` on every input in one sandboxed process. A program is graded as a function of its inputs:
    the same program on the same inputs (and limits) in this process reuses the earlier run — conditions and
    methods often submit identical programs — except a run that timed out, which may depend on load."""
    limits = limits or SandboxLimits(wall_s=20.0, cpu_s=20, memory_mb=512)
    stdin = json.dumps(inputs)
    key = hashlib.sha256(json.dumps([program, stdin, repr(limits)]).encode()).hexdigest()
    with _RUNS_LOCK:
        if key in _RUNS:
            _RUNS.move_to_end(key)
            return _RUNS[key]
    run = _run(program, stdin, len(inputs), limits)
    if run.failure != "timed out":
        with _RUNS_LOCK:
            _RUNS[key] = run
            while len(_RUNS) > _RUNS_MAX:
                _RUNS.popitem(last=False)
    return run


def _run(program: str, stdin: str, n: int, limits: SandboxLimits) -> ProgramRun:
    res = run_python(_DRIVER, stdin=stdin, files={"solution.py": program}, limits=limits)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    if res.limit is not None or line is None:
        why = res.killed_for() or f"no result (exit {res.returncode}): {res.stderr[-300:]}"
        return ProgramRun([None] * n, [why] * n, res.isolation, failure=why)
    data = json.loads(line[len(MARK) :])
    if "load_error" in data:
        return ProgramRun([None] * n, [data["load_error"]] * n, res.isolation, failure=data["load_error"])
    totals = [r.get("totals") for r in data["results"]]
    errors = [r.get("error") for r in data["results"]]
    return ProgramRun(totals, errors, res.isolation)
