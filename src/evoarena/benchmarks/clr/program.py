"""Running a solver-written CLR program in the sandbox on many record sets at once.

Contract (told to the solver): the program defines `solve(records: list[dict]) -> dict[str, int]`, the count
of records per entity after applying the rules. Everything else about the answer (largest total in practice,
sum of totals in test) is computed by the grader, so one program serves practice, test and diagnostics.
"""

from __future__ import annotations

import json
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


def run_program(program: str, inputs: list[Records], limits: SandboxLimits | None = None) -> ProgramRun:
    limits = limits or SandboxLimits(wall_s=20.0, cpu_s=20, memory_mb=512)
    res = run_python(_DRIVER, stdin=json.dumps(inputs), files={"solution.py": program}, limits=limits)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    n = len(inputs)
    if res.timed_out or line is None:
        why = "timed out" if res.timed_out else f"no result (exit {res.returncode}): {res.stderr[-300:]}"
        return ProgramRun([None] * n, [why] * n, res.isolation, failure=why)
    data = json.loads(line[len(MARK) :])
    if "load_error" in data:
        return ProgramRun([None] * n, [data["load_error"]] * n, res.isolation, failure=data["load_error"])
    totals = [r.get("totals") for r in data["results"]]
    errors = [r.get("error") for r in data["results"]]
    return ProgramRun(totals, errors, res.isolation)
