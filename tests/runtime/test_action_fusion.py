"""Action Fusion on a small repository the test builds: one call edits a module and runs its unit test in the
project's sandbox; results come back in order, a failing test is never masked, a failed edit stops before the test."""

from __future__ import annotations

from typing import Any

import pytest

from evoarena.runtime import ActionFusion, Edit, ThenRun, Workspace, Write
from evoarena.runtime.action_fusion import FAILED, SKIPPED, SUCCEEDED
from evoarena.sandbox import SandboxLimits, SandboxResult, run_python

CALC = "def add(a, b):\n    return a - b  # bug\n"
TEST_CALC = (
    "import unittest\n"
    "from calc import add\n\n"
    "class TestAdd(unittest.TestCase):\n"
    "    def test_add(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n"
)
RUN_TESTS = ThenRun("import unittest\nunittest.main(module='test_calc', verbosity=2)\n",
                    limits=SandboxLimits(wall_s=30.0, cpu_s=30))


def repo() -> Workspace:
    return Workspace({"calc.py": CALC, "test_calc.py": TEST_CALC})


def test_a_fixing_edit_and_its_test_come_back_in_order_and_pass() -> None:
    fusion = ActionFusion(repo())
    out = fusion.call(Edit("calc.py", "return a - b  # bug", "return a + b"), RUN_TESTS)
    assert [name for name, _ in out.steps()] == ["edit", "test"]
    assert out.edit.ok and out.edit.message == "edited calc.py (1 replacement)"
    assert out.test is not None and out.test.returncode == 0 and out.ok
    assert "test_add (test_calc.TestAdd" in out.test.stderr and "OK" in out.test.stderr
    text = out.observation()
    assert text.index("edited calc.py") < text.index(SUCCEEDED) < text.index("OK")
    assert fusion.workspace.files["calc.py"] == "def add(a, b):\n    return a + b\n"
    assert (fusion.calls, fusion.tests_run) == (1, 1)


def test_a_failing_test_is_reported_verbatim_and_the_edit_is_kept() -> None:
    fusion = ActionFusion(repo())
    out = fusion.call(Edit("calc.py", "# bug", "# still wrong"), RUN_TESTS)
    assert out.edit.ok and out.test is not None and not out.ok
    assert out.test.returncode == 1
    assert "AssertionError: -1 != 5" in out.test.stderr and "FAILED (failures=1)" in out.test.stderr
    text = out.observation()
    assert f"{FAILED} exit status 1" in text and SUCCEEDED not in text
    assert out.test.stderr in text and out.test.stdout in text  # verbatim, not summarised
    assert "# still wrong" in fusion.workspace.files["calc.py"]  # a failing test does not undo the edit


def test_the_test_sees_exactly_the_files_after_the_edit() -> None:
    fusion = ActionFusion(repo())
    out = fusion.call(Write("calc.py", "def add(a, b):\n    return b + a\n"),
                      ThenRun("import calc, inspect\nprint(inspect.getsource(calc.add))\n"))
    assert out.ok and out.test is not None and out.test.stdout == "def add(a, b):\n    return b + a\n\n"
    assert out.edit.message == "rewrote calc.py (32 characters)" and out.edit.before_sha256 != out.edit.after_sha256


def test_a_failed_edit_stops_before_the_test() -> None:
    calls: list[Any] = []

    def runner(code: str, **kw: Any) -> SandboxResult:
        calls.append(code)
        return run_python(code, **kw)

    ws = repo()
    fusion = ActionFusion(ws, runner=runner)
    bads: list[Write | Edit] = [
        Edit("calc.py", "return a * b", "return a + b"),  # not found
        Edit("missing.py", "x", "y"),  # no such file
        Edit("calc.py", "a", "z"),  # not unique
        Write("../escape.py", "x = 1\n"),  # outside the workspace
        Write("main.py", "x = 1\n"),  # reserved for the test program
    ]
    for bad in bads:
        out = fusion.call(bad, RUN_TESTS)
        assert not out.edit.ok and out.skipped and out.test is None and not out.ok, bad
        assert [name for name, _ in out.steps()] == ["edit"]
        assert SKIPPED in out.observation() and out.observation().startswith(out.edit.message)
    assert calls == [] and fusion.tests_run == 0 and fusion.calls == 5
    assert ws.files == {"calc.py": CALC, "test_calc.py": TEST_CALC}  # nothing changed
    assert "found 3 times" in fusion.call(Edit("calc.py", "b", "c"), RUN_TESTS).edit.message  # add(a, b), a - b, bug


def test_a_test_killed_by_a_limit_is_a_failure() -> None:
    fusion = ActionFusion(repo())
    out = fusion.call(Write("slow.py", "X = 1\n"),
                      ThenRun("while True:\n    pass\n", limits=SandboxLimits(wall_s=1.0, cpu_s=1)))
    assert out.edit.ok and out.test is not None and out.test.returncode is None and not out.ok
    assert f"{FAILED} killed: timed out" in out.observation()


def test_a_runner_that_cannot_run_the_test_is_reported_not_passed() -> None:
    def broken(code: str, **kw: Any) -> SandboxResult:
        raise OSError("no interpreter")

    out = ActionFusion(repo(), runner=broken).call(Write("a.py", "A = 1\n"), RUN_TESTS)
    assert out.edit.ok and out.test is None and not out.skipped and not out.ok
    assert out.test_error == "OSError: no interpreter" and f"{FAILED} the test could not be run" in out.observation()


def test_a_workspace_refuses_paths_that_leave_it() -> None:
    with pytest.raises(ValueError, match="relative"):
        Workspace({"/etc/passwd": "x"})
