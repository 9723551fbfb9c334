"""Running a solution against its problem's hidden `check(candidate)` in evoarena's sandbox, never in this process,
and saying where it failed: which assertion of the test (by number), or the exception and the line of the program it
came from."""

from __future__ import annotations

import ast
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from evoarena.benchmarks.pyparse import parse_python
from evoarena.sandbox import SandboxLimits, run_python

MARK = "@@EVOARENA-HUMANEVAL@@"
# The driver runs the program and the test in one namespace (as the upstream harness concatenates them), with the
# program's own prints sent nowhere, and reports one JSON line: passed, or the error and the frames it passed through.
_DRIVER = f"""
import io, json, sys, traceback
real = sys.stdout
sys.stdout = io.StringIO()
entry = sys.stdin.read().strip()
def frames(err):
    return [[f.filename, f.lineno] for f in traceback.extract_tb(err.__traceback__)
            if f.filename in ("solution.py", "check.py")]
def report(out):
    real.write({MARK!r} + json.dumps(out) + "\\n")
    real.flush()
ns = {{"__name__": "__main__"}}
stage = "load"
try:
    exec(compile(open("solution.py", encoding="utf-8").read(), "solution.py", "exec"), ns)
    stage = "test"
    exec(compile(open("check.py", encoding="utf-8").read(), "check.py", "exec"), ns)
    if entry not in ns:
        report({{"stage": "load", "error": "NameError", "message": "the code does not define " + entry,
                 "frames": []}})
        raise SystemExit(0)
    stage = "check"
    ns["check"](ns[entry])
    report({{"passed": True}})
except BaseException as err:
    line = None
    if isinstance(err, SyntaxError):
        line = err.lineno
    report({{"stage": stage, "error": type(err).__name__, "message": str(err)[:300], "frames": frames(err),
             "line": line}})
"""


@dataclass(frozen=True)
class Outcome:
    """What one run showed: passed, or why not, said without the hidden test's source (`assertion` is the test's
    source line only for `reveal`)."""

    passed: bool
    message: str
    assertion: str | None = None
    isolation: str = ""


def _asserts(test: str) -> list[tuple[int, int, str]]:
    """(first line, last line, source) of every assert statement of the test, in source order."""
    tree = parse_python(test)
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assert)), key=lambda n: n.lineno)
    return [(n.lineno, n.end_lineno or n.lineno, ast.get_source_segment(test, n) or "") for n in nodes]


def _line(source: str, lineno: int | None) -> str:
    lines = source.splitlines()
    if lineno is None or not 1 <= lineno <= len(lines):
        return ""
    return lines[lineno - 1].strip()


def explain(data: dict[str, Any], program: str, test: str) -> Outcome:
    """The driver's report as feedback: the failing assertion's number, or the exception with its program line."""
    if data.get("passed"):
        return Outcome(True, "All tests passed.")
    frames = [(str(f), int(n)) for f, n in data.get("frames", [])]
    error = f"{data.get('error')}: {data.get('message')}".rstrip(": ")
    asserts = _asserts(test)
    in_check = [n for f, n in frames if f == "check.py"]
    in_solution = [n for f, n in frames if f == "solution.py"]
    which = next(((i, src) for i, (a, b, src) in enumerate(asserts, 1) if in_check and a <= in_check[-1] <= b),
                 None)
    during = f" while running hidden test assertion {which[0]} of {len(asserts)}" if which else ""
    if data.get("stage") == "load":
        lineno = data.get("line") if data.get("error") == "SyntaxError" else (in_solution[-1] if in_solution else None)
        shown = _line(program, lineno if isinstance(lineno, int) else None)
        return Outcome(False, f"The code does not run: {error}{f' (line: {shown!r})' if shown else ''}.")
    if data.get("error") == "AssertionError" and in_check and not in_solution:
        if which is None:
            return Outcome(False, "A hidden test assertion failed.")
        return Outcome(False, f"Hidden test assertion {which[0]} of {len(asserts)} failed (the function returned a "
                              "wrong result).", which[1])
    if in_solution:
        shown = _line(program, in_solution[-1])
        return Outcome(False, f"The function raised {error}{f' at {shown!r}' if shown else ''}{during}.",
                       which[1] if which else None)
    return Outcome(False, f"The test raised {error}{during} (the function's result was not what the test could "
                          "use).", which[1] if which else None)


def check(program: str, test: str, entry_point: str, limits: SandboxLimits) -> Outcome:
    """Run `program` with `test` and `check(entry_point)` in the sandbox."""
    res = run_python(_DRIVER, stdin=entry_point, files={"solution.py": program, "check.py": test}, limits=limits)
    line = next((ln for ln in reversed(res.stdout.splitlines()) if ln.startswith(MARK)), None)
    if res.timed_out:
        return Outcome(False, f"Timed out after {limits.wall_s:g} s (an endless loop, or far too slow).",
                       isolation=res.isolation)
    if res.limit is not None:
        return Outcome(False, f"The program was {res.killed_for()}.", isolation=res.isolation)
    if line is None:
        tail = res.stderr.strip().splitlines()[-1:] or [f"exit status {res.returncode}"]
        return Outcome(False, f"The program stopped without a result ({tail[0][:200]}).", isolation=res.isolation)
    out = explain(json.loads(line[len(MARK):]), program, test)
    return Outcome(out.passed, out.message, out.assertion, res.isolation)


_RUNS: OrderedDict[str, Outcome] = OrderedDict()
_LOCK = threading.Lock()
_MAX = 4096


def check_cached(program: str, test: str, entry_point: str, limits: SandboxLimits) -> Outcome:
    """`check`, reusing an earlier run of the same program on the same test in this process (conditions often submit
    identical code), except a run that timed out, which may depend on load."""
    key = hashlib.sha256(json.dumps([program, test, entry_point, repr(limits)]).encode()).hexdigest()
    with _LOCK:
        if key in _RUNS:
            _RUNS.move_to_end(key)
            return _RUNS[key]
    out = check(program, test, entry_point, limits)
    if not out.message.startswith("Timed out"):
        with _LOCK:
            _RUNS[key] = out
            while len(_RUNS) > _MAX:
                _RUNS.popitem(last=False)
    return out
