"""Action Fusion replayed over seeded edit→test sessions in the real sandbox (SoL-Pi, seed 000 §10): how many model
round trips does fusing an edit with its declared test save, and does the fused call keep what the module promises
on every pair — the order (edit, then test), a test's exit status, stdout and stderr verbatim, a test never run after
an edit that failed (and saying so), the test seeing exactly the edited files?

A workspace is a small Python module of five arithmetic functions (`mod_<seed>.py`), two of them wrong at the start.
A session is a sequence of pairs, each an edit and the test declared with it, of one of five planned kinds: a fix (a
function made right; the test passes once none is left wrong), a break (a right function made wrong: the test
fails), a crash (the module no longer imports: a traceback on stderr; the next pair undoes it), a new file written and
tested, and a failed edit (text not found, text found five times, a missing file, a path outside the workspace). The
test program is deterministic (no timings), prints the SHA-256 of the module as it read it, and exits 1 on a wrong
value, 2 when the module does not import.

Each session is run twice from the same start: fused (`ActionFusion.call`, one round trip per pair) and unfused (the
edit as one call, then — only if it applied — the test as a second call, run directly by the sandbox). The unfused
run is the reference the fused results are checked against byte for byte. No model is called: the agent's turns are
the seeded script, and a round trip is one model request the agent would make.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from evoarena.codec import to_plain
from evoarena.runtime import ActionFusion, Edit, Fused, ThenRun, Workspace, Write
from evoarena.runtime.action_fusion import SKIPPED, Runner
from evoarena.runtime.text import sha256_text
from evoarena.sandbox import SandboxLimits, SandboxResult, run_python

KINDS = ("fix", "break", "crash", "write", "failed-edit")
#: Shares of the planned pair kinds.
WEIGHTS = (0.35, 0.2, 0.1, 0.15, 0.2)
LIMITS = SandboxLimits(wall_s=20.0, cpu_s=20)
_OPS = (("add", "a + b"), ("sub", "a - b"), ("mul", "a * b"), ("mod", "a % b"), ("max2", "max(a, b)"))
_CASES = ((7, 3), (2, 9), (12, 5))


def _function(name: str, expr: str) -> str:
    return f"def {name}(a, b):\n    return {expr}\n"


def _test_program(module: str, names: list[str]) -> str:
    """A deterministic test: the module's SHA-256 as read, one line per wrong case (stderr), exit 1 on any; a module
    that does not import gives its traceback (scratch paths made relative) and exit 2."""
    table = {name: [(a, b, eval(expr, {}, {"a": a, "b": b})) for a, b in _CASES]  # noqa: S307 - our own exprs
             for name, expr in _OPS if name in names}
    return "\n".join([
        "import hashlib, os, sys, traceback",
        f"print('read {module}.py sha256=' + hashlib.sha256(open('{module}.py', 'rb').read()).hexdigest())",
        "try:",
        f"    import {module} as m",
        "except Exception:  # the traceback with paths relative to the scratch directory, so runs compare equal",
        "    sys.stderr.write(traceback.format_exc().replace(os.getcwd() + os.sep, ''))",
        "    sys.exit(2)",
        f"TABLE = {table!r}",
        "bad = 0",
        "for name, cases in sorted(TABLE.items()):",
        "    for a, b, want in cases:",
        "        got = getattr(m, name)(a, b)",
        "        if got != want:",
        "            bad += 1",
        "            print(f'FAIL {name}({a}, {b}) = {got!r}, expected {want!r}', file=sys.stderr)",
        "print(f'{sum(len(c) for c in TABLE.values()) - bad} passed, {bad} failed')",
        "sys.exit(1 if bad else 0)",
        ""])


@dataclass(frozen=True)
class Pair:
    """One planned agent turn: the change, the test declared with it, and what the plan expects."""

    kind: str
    change: Write | Edit
    test: ThenRun
    edit_applies: bool
    test_passes: bool | None  # None: the test must be skipped


def workspace(seed: int) -> tuple[dict[str, str], str, dict[str, str]]:
    """The seeded starting files, the module's name and each function's body; two of the five start wrong."""
    rng = random.Random(seed)
    module = f"mod_{seed}"
    wrong = set(rng.sample([n for n, _ in _OPS], 2))
    state = {n: "a - b - 1" if n in wrong else e for n, e in _OPS}
    body = "".join(_function(n, state[n]) for n, _ in _OPS)
    return {f"{module}.py": body, "README.txt": "arithmetic helpers\n"}, module, state


def session(seed: int = 0, pairs: int = 12) -> tuple[dict[str, str], list[Pair]]:
    """The seeded start and the planned pairs. The plan tracks each function's body, so every planned outcome is
    known before anything runs (and checked after). A crash is followed by its undo, so one pair may become two."""
    if pairs < 1:
        raise ValueError("pairs must be >= 1")
    files, module, state = workspace(seed)
    rng = random.Random(seed * 7919 + 1)
    path = f"{module}.py"
    right = dict(_OPS)
    test = ThenRun(_test_program(module, [n for n, _ in _OPS]), limits=LIMITS)
    out: list[Pair] = []

    def edit(kind: str, name: str, expr: str) -> None:
        change = Edit(path, f"def {name}(a, b):\n    return {state[name]}\n", _function(name, expr))
        state[name] = expr
        out.append(Pair(kind, change, test, True, _passes(state)))

    for i in range(pairs):
        kind = rng.choices(KINDS, WEIGHTS)[0]
        if kind == "write":
            out.append(Pair(kind, Write(f"helper_{i}.py", f"VALUE = {i}\n"), ThenRun(
                f"import helper_{i}\nassert helper_{i}.VALUE == {i}, 'wrong value'\nprint('helper ok')\n",
                limits=LIMITS), True, True))
        elif kind == "failed-edit":
            change: Write | Edit = rng.choice((
                Edit(path, "return a ** b\n", "return a + b\n"),  # not in the file
                Edit(path, "(a, b):\n", "(a, b, c=0):\n"),  # in it five times
                Edit(f"missing_{i}.py", "x", "y"),  # no such file
                Write(f"../outside_{i}.py", "x = 1\n")))  # outside the workspace
            out.append(Pair(kind, change, test, False, None))
        else:
            wrong = [n for n, e in right.items() if _value(state[n]) != _value(e)]
            name = rng.choice(wrong if kind == "fix" and wrong else sorted(right))  # a fix goes to a wrong one
            before = state[name]
            expr = {"fix": right[name] if before != right[name] else f"({right[name]})",  # an equivalent rewrite
                    "break": f"{right[name]} + 1", "crash": "a +"}[kind]
            edit(kind, name, expr)
            if kind == "crash":  # the agent undoes it in its next turn
                edit("fix", name, before)
    return files, out


def _value(expr: str) -> tuple[object, ...] | None:
    """What a function with body `expr` returns on the test's cases (None: it does not compile)."""
    try:
        code = compile(expr, "<body>", "eval")
    except SyntaxError:
        return None
    return tuple(eval(code, {}, {"a": a, "b": b}) for a, b in _CASES)  # noqa: S307 - the study's own bodies


def _passes(state: dict[str, str]) -> bool:
    """Whether a module of these bodies passes its test (the plan's expectation, judged here)."""
    return all(_value(state[n]) == _value(e) for n, e in _OPS)


@dataclass(frozen=True)
class Replay:
    """One session, fused and unfused. Round trips are model requests; `violations_*` count pairs breaking a
    promise (0 is the pass): `order` — the observation is not the edit's line then the test's marker and output;
    `verbatim` — the fused test's exit status, stdout or stderr differ from the same test run directly on the same
    files, or are not in the observation as they are; `skip` — a test ran after a failed edit, or the observation
    does not say it was skipped, or the failed edit changed the workspace; `snapshot` — the test read a module
    other than the one the edit left; `plan` — the outcome differs from the plan; `workspaces` — the fused and
    unfused workspaces differ at the end."""

    seed: int
    pairs: int
    edits_failed: int
    tests_passed: int
    tests_failed: int
    tests_skipped: int
    round_trips_unfused: int
    round_trips_fused: int
    sandbox_runs: int
    violations_order: int
    violations_verbatim: int
    violations_skip: int
    violations_snapshot: int
    violations_plan: int
    workspaces_differ: bool

    @property
    def saved(self) -> int:
        return self.round_trips_unfused - self.round_trips_fused

    @property
    def violations(self) -> int:
        return (self.violations_order + self.violations_verbatim + self.violations_skip + self.violations_snapshot
                + self.violations_plan + int(self.workspaces_differ))

    def row(self) -> dict[str, object]:
        """Its plain form with what it derives, as `evoarena study --json` prints it."""
        return {**to_plain(self), "saved": self.saved, "violations": self.violations}


def _order_ok(f: Fused) -> bool:
    """The observation is the edit's line, then the test's marker, stdout and stderr, in that order; a test after
    a failed edit is out of order (and counted by the skip check too)."""
    obs = f.observation()
    kinds = [k for k, _ in f.steps()]
    if not obs.startswith(f.edit.message + "\n"):
        return False
    if f.test is None:
        return kinds == ["edit"]
    marks = [obs.find(x) for x in ("[then_run:", "[stdout]", "[stderr]")]
    return (f.edit.ok and kinds == ["edit", "test"] and -1 not in marks
            and len(f.edit.message) < marks[0] < marks[1] < marks[2])


def _verbatim_ok(f: Fused, direct: SandboxResult) -> bool:
    t = f.test
    if t is None or (t.returncode, t.stdout, t.stderr) != (direct.returncode, direct.stdout, direct.stderr):
        return False
    return f.observation().endswith(f"exit status {t.returncode}\n[stdout]\n{t.stdout}\n[stderr]\n{t.stderr}")


def replay(seed: int = 0, pairs: int = 12, *, runner: Runner = run_python) -> Replay:
    """Run the seeded session fused and unfused in the sandbox and check every pair (see `Replay`). `runner` runs
    the fused side's tests (default: the sandbox, as the unfused side); a test passes another to check that the
    checks catch a fusion that misreports."""
    files, plan = session(seed, pairs)
    module = next(name for name in files if name.startswith("mod_"))
    fusion = ActionFusion(Workspace(files), runner=runner)
    plain = Workspace(files)
    n = dict.fromkeys(("failed", "passed", "tfailed", "skipped", "unfused", "runs", "order", "verbatim", "skip",
                       "snapshot", "plan"), 0)
    for p in plan:
        before = fusion.workspace.files
        ran_before = fusion.tests_run
        fused = fusion.call(p.change, p.test)
        edit = plain.apply(p.change)
        n["unfused"] += 1
        n["order"] += not _order_ok(fused)
        if not fused.edit.ok:
            n["failed"] += 1
            n["skipped"] += fused.test is None and SKIPPED in fused.observation()
            n["skip"] += (fused.test is not None or fusion.tests_run != ran_before or fusion.workspace.files != before
                          or SKIPPED not in fused.observation() or edit.ok)
            n["plan"] += p.edit_applies
            continue
        n["unfused"] += 1  # the test is a second request
        direct = run_python(p.test.code, stdin=p.test.stdin, files=plain.files, limits=p.test.limits)
        n["runs"] += 2
        n["verbatim"] += not _verbatim_ok(fused, direct)
        passed = fused.ok
        n["passed" if passed else "tfailed"] += 1
        n["plan"] += (not p.edit_applies) or passed != p.test_passes
        if fused.test is not None and fused.test.stdout.startswith("read "):  # a module test: which module it read
            read = fused.test.stdout.split("sha256=", 1)[1].split("\n", 1)[0]
            n["snapshot"] += read != sha256_text(fusion.workspace.files[module])
    return Replay(seed, len(plan), n["failed"], n["passed"], n["tfailed"], n["skipped"], n["unfused"], len(plan),
                  n["runs"], n["order"], n["verbatim"], n["skip"], n["snapshot"], n["plan"],
                  fusion.workspace.files != plain.files)


def study(seeds: int = 10, pairs: int = 12) -> list[Replay]:
    """Sessions on seeds 0 .. seeds - 1."""
    return [replay(seed, pairs) for seed in range(seeds)]


def table(rows: list[Replay]) -> str:
    """A plain-text table, one row per seed, and the totals."""
    head = (f"{'seed':>4} {'pairs':>5} {'edit fail':>9} {'test pass':>9} {'test fail':>9} {'skipped':>7} "
            f"{'trips unfused':>13} {'trips fused':>11} {'saved':>5} {'violations':>10}")
    lines = ["Action Fusion: edit + declared test as one call, in the sandbox (model-free)", head]
    for r in rows:
        lines.append(f"{r.seed:>4} {r.pairs:>5} {r.edits_failed:>9} {r.tests_passed:>9} {r.tests_failed:>9} "
                     f"{r.tests_skipped:>7} {r.round_trips_unfused:>13} {r.round_trips_fused:>11} {r.saved:>5} "
                     f"{r.violations:>10}")
    unf, fus = sum(r.round_trips_unfused for r in rows), sum(r.round_trips_fused for r in rows)
    lines.append(f"total: {unf} → {fus} round trips ({(unf - fus) / unf:.1%} fewer); "
                 f"{sum(r.violations for r in rows)} promise violations over {sum(r.pairs for r in rows)} pairs")
    return "\n".join(lines)


def reading(rows: list[Replay]) -> str:
    """One paragraph on what the numbers say, written from them."""
    if not rows:
        return ""
    unf, fus = sum(r.round_trips_unfused for r in rows), sum(r.round_trips_fused for r in rows)
    pairs, failed = sum(r.pairs for r in rows), sum(r.edits_failed for r in rows)
    tfail = sum(r.tests_failed for r in rows)
    return (
        f"Over {len(rows)} sessions ({pairs} pairs: {failed} failed edits, {tfail} failing tests, "
        f"{sum(r.tests_passed for r in rows)} passing), fusing took {fus} model round trips where the same turns "
        f"unfused took {unf}: {unf - fus} fewer ({(unf - fus) / unf:.0%}), one per edit that applied — a failed "
        f"edit saves nothing, since unfused the agent would not run the test either. Promise violations: "
        f"{sum(r.violations for r in rows)} (order {sum(r.violations_order for r in rows)}, verbatim test output "
        f"{sum(r.violations_verbatim for r in rows)}, skip after a failed edit {sum(r.violations_skip for r in rows)}, "
        f"test saw other files {sum(r.violations_snapshot for r in rows)}, outcome off plan "
        f"{sum(r.violations_plan for r in rows)}, workspaces differing at the end "
        f"{sum(r.workspaces_differ for r in rows)}). The saving is in requests, each a resend of the context; "
        "whether an agent plans its tests well enough to declare them with the edit is not measured here."
    )
