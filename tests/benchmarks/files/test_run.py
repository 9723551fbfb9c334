"""`evoarena run` on a user's JSONL file with each grader, with a scripted player that says exactly what each row
asks it to: the test scores are the grader's verdicts on those outputs, and the grader's feedback is what a method's
update role is shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

EVOARENA = [sys.executable, "-m", "evoarena.cli"]

PLAYER = '''"""Says what the task asks it to say (the JSON string after SAY); as a reflector, one fixed line."""

import json


def player(messages, params):
    prompt = messages[-1].content
    if prompt.rstrip().endswith("Reflection:"):
        return "Give the answer in the form the task expects."
    return json.loads(prompt.rsplit("SAY ", 1)[1].splitlines()[0])
'''

USER_GRADER = '''def overlap(output, reference, row):
    """Share of the reference's words in the output, with a message naming the row's unit."""
    words = set(output.lower().split())
    want = reference.lower().split()
    hits = sum(w in words for w in want)
    return hits / len(want), f"{hits} of {len(want)} words ({row['unit']})"
'''

# grader -> (params, [(what the player says, the reference, its expected score, extra columns)])
CASES: dict[str, tuple[dict[str, Any], list[tuple[str, Any, float, dict[str, Any]]]]] = {
    "exact": ({}, [
        ("Answer: Paris", "Paris", 1.0, {}),
        ("Answer: Paris.", "Paris", 0.0, {}),
        ("Thinking...\nParis", "Paris", 1.0, {}),
        ("Answer: paris", "Paris", 0.0, {}),
    ]),
    "normalized": ({}, [
        ("Answer: The Paris!", "paris", 1.0, {}),
        ("Answer:   new  YORK.", "New York", 1.0, {}),
        ("Answer: Lyon", "Paris", 0.0, {}),
        ("", "Paris", 0.0, {}),
    ]),
    "numeric": ({"tolerance": 0.5}, [
        ("3 + 4 = 7, plus 3.\nAnswer: 10.5", 10, 1.0, {}),
        ("Answer: 10.51", 10, 0.0, {}),
        ("Answer: 2,500 metres", "2500", 1.0, {}),
        ("Answer: 50%", 0.5, 1.0, {}),
        ("Answer: none", 3, 0.0, {}),
    ]),
    "regex": ({}, [
        ("Answer: 555-1234", r"\d{3}-\d{4}", 1.0, {}),
        ("Answer: call 555-1234", r"\d{3}-\d{4}", 0.0, {}),
        ("Answer: yes", "yes|y", 1.0, {}),
    ]),
    "regex_pattern": ({"grader": "regex", "pattern": r"ID-(\d+)"}, [
        ("It is ID-42, I think.", "42", 1.0, {}),
        ("It is ID-43.", "42", 0.0, {}),
        ("No idea.", "42", 0.0, {}),
    ]),
    "contains": ({"ignore_case": True}, [
        ("I count 4 apples.", "4", 1.0, {}),
        ("I count 14 apples.", "4", 0.0, {}),
        ("It is PARIS, of course.", "Paris", 1.0, {}),
    ]),
    "choice": ({"template": "{input}\n{options}"}, [
        ("Answer: B", "Paris", 1.0, {"choices": ["London", "Paris", "Rome"]}),
        ("Answer: Paris", "B", 1.0, {"choices": ["London", "Paris", "Rome"]}),
        ("Answer: (c)", "B", 0.0, {"choices": ["London", "Paris", "Rome"]}),
        ("I think the answer is A", "A", 1.0, {"choices": "Oslo|Bern"}),
        ("A or B", "A", 0.0, {"choices": "Oslo|Bern"}),
    ]),
    "my_grader:overlap": ({"pass_threshold": 0.5}, [
        ("the red fox", "red fox", 1.0, {"unit": "cm"}),
        ("a red hen", "red fox", 0.5, {"unit": "cm"}),
        ("nothing", "red fox", 0.0, {"unit": "cm"}),
        ("fox", "quick brown fox jumps", 0.25, {"unit": "kg"}),
    ]),
}
PASSED = {"my_grader:overlap": [1.0, 1.0, 0.0, 0.0]}  # pass_threshold 0.5: the 0.5 passes, the 0.25 does not


def evoarena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([*EVOARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def write_project(where: Path, grader: str, params: dict[str, Any],
                  cases: list[tuple[str, Any, float, dict[str, Any]]], *, methods: list[dict[str, Any]] | None = None,
                  practice: list[tuple[str, Any]] | None = None) -> Path:
    """tasks.jsonl (the cases on test; passing fillers on train and val), the player and a spec."""
    filler = practice or [(c[0], c[1]) for c in cases if c[2] == 1.0][:1]
    lines = []
    for i, (says, reference, _, extra) in enumerate(cases):
        lines.append({"input": f"Task {i}: SAY {json.dumps(says)}", "answer": reference, "part": "test", **extra})
    for split in ("train", "val"):
        for j, (says, reference) in enumerate(filler):
            extra = cases[0][3]
            lines.append({"input": f"{split} {j}: SAY {json.dumps(says)}", "answer": reference, "part": split,
                          **extra})
    (where / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (where / "echo_player.py").write_text(PLAYER)
    (where / "my_grader.py").write_text(USER_GRADER)
    spec = {
        "name": f"own-{grader.replace(':', '-')}",
        "benchmark": {"name": "files", "params": {"path": "tasks.jsonl", "split": "part", "grader": grader,
                                                  "template": "{input}", **params}},
        "methods": methods or [{"name": "frozen"}],
        "models": {"scripted": {"backend": "scripted", "model": "echo_player:player"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
    }
    path = where / "spec.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh current directory for a user's project run in process; its modules are forgotten afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    for name in ("echo_player", "my_grader"):
        sys.modules.pop(name, None)


def run_in_process(spec_path: Path) -> dict[str, Any]:
    """What `evoarena run SPEC --model scripted --run-dir run` does, in this process (the CLI is run below)."""
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.spec import load_spec

    spec = load_spec(spec_path).with_model("scripted")
    return run_experiment(spec, spec_path.parent / "run", search=(spec_path.parent,))


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_with_each_grader(project: Path, case: str) -> None:
    params, cases = CASES[case]
    grader = str(params.get("grader", case))
    spec = write_project(project, grader, {k: v for k, v in params.items() if k != "grader"}, cases)
    results = run_in_process(spec)
    assert results["evidence"] == "mechanism"
    test = results["conditions"][0]["test"]
    scores = [c[2] for c in cases]
    passed = PASSED.get(case, scores)
    assert test["n_graded"] == len(cases) and test["n_errors"] == 0
    assert test["mean"] == pytest.approx(sum(scores) / len(scores))
    assert test["pass_rate"]["mean"] == pytest.approx(sum(passed) / len(passed))
    assert (project / "run" / "report.html").is_file()


def test_evoarena_run_on_a_users_jsonl(tmp_path: Path) -> None:
    """The same through the command line, from the project's directory."""
    params, cases = CASES["numeric"]
    spec = write_project(tmp_path, "numeric", params, cases)
    done = evoarena("run", spec.name, "--model", "scripted", "--run-dir", "run", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    test = json.loads(done.stdout)["conditions"][0]["test"]
    assert (test["n_graded"], test["mean"]) == (5, 0.6)
    assert (tmp_path / "run" / "report.html").is_file()


def test_the_grader_feedback_is_what_the_reflector_sees(tmp_path: Path) -> None:
    cases = [("Answer: 10", 10, 1.0, {}), ("Answer: 12", 10, 0.0, {})]
    spec = write_project(tmp_path, "numeric", {"tolerance": 0.5}, cases,
                         methods=[{"name": "reflexion", "params": {"max_trials": 1}}],
                         practice=[("Answer: 12", 10)])  # a failing practice task, so the reflector is asked
    done = evoarena("run", spec.name, "--run-dir", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = evoarena("trace", "run", "--role", "reflector", "--limit", "1", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "Feedback: The answer 12 is not the expected value (tolerance: absolute 0.5).\n" in shown.stdout


def test_reveal_puts_the_reference_in_the_feedback(tmp_path: Path) -> None:
    cases = [("Answer: 10", 10, 1.0, {})]
    spec = write_project(tmp_path, "numeric", {"reveal": True}, cases,
                         methods=[{"name": "reflexion", "params": {"max_trials": 1}}], practice=[("Answer: 12", 10)])
    assert evoarena("run", spec.name, "--run-dir", "run", cwd=tmp_path).returncode == 0
    shown = evoarena("trace", "run", "--role", "reflector", "--limit", "1", cwd=tmp_path)
    assert "Feedback: The answer 12 is not the expected value. The expected answer is '10'.\n" in shown.stdout


@pytest.mark.parametrize(("change", "message"), [
    ({"tolerance": 0.1}, "benchmark.params.tolerance: applies to the numeric grader, not 'exact'"),
    ({"grader": "exactt"}, "benchmark.params.grader: unknown grader 'exactt' — did you mean 'exact'?"),
    ({"answr": "x"}, "benchmark.params (files): unknown param 'answr' — did you mean 'answer'?"),
    ({"answer": "gold"}, "tasks.jsonl:1: no column 'gold' (benchmark.params.answer; columns: input, answer, part)"),
    ({"grader": "my_grader:nothing"}, "benchmark.params.grader: 'my_grader:nothing': my_grader has no nothing"),
    ({"split": "", "ratio": [1, 0, 1]}, "split 'val' is empty (3 tasks in 3 sources, ratio [1, 0, 1] seed 0"),
])
def test_a_bad_spec_is_refused_and_writes_nothing(project: Path, change: dict[str, Any], message: str) -> None:
    from evoarena.spec import SpecError

    spec = write_project(project, "exact", {}, [("Answer: Paris", "Paris", 1.0, {})])
    data = yaml.safe_load(spec.read_text())
    data["benchmark"]["params"].update(change)
    spec.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError) as err:
        run_in_process(spec)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)
    assert not (project / "run").exists()


def test_a_missing_file_fails_in_one_line(tmp_path: Path) -> None:
    spec = write_project(tmp_path, "exact", {}, [("Answer: Paris", "Paris", 1.0, {})])
    (tmp_path / "tasks.jsonl").unlink()
    done = evoarena("run", spec.name, "--run-dir", "run", cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr.strip() == ("error: benchmark.params.path: no such file 'tasks.jsonl' (relative paths resolve "
                                   f"against the current directory {tmp_path})")


FAULTS: dict[str, tuple[str, str]] = {  # what is appended to tasks.jsonl -> the one line `run` prints
    "bad-json": ('{"input": "x", "answer": \n', "tasks.jsonl:4: not valid JSON (Expecting value at column 26)"),
    "missing-field": ('{"input": "x", "part": "test"}\n', "tasks.jsonl:4: no column 'answer' (benchmark.params.answer; "
                      "columns: input, answer, part)"),
    "bad-split": ('{"input": "x", "answer": "y", "part": "later"}\n', "tasks.jsonl:4: split 'later' is not train, "
                  "val or test"),
}


@pytest.mark.parametrize("flags", [("--json",), ()], ids=["json", "progress-bars"])
def test_a_data_error_is_the_only_line_run_prints(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Before the banner, and with progress bars on before any cell's bar: nothing is written either."""
    spec = write_project(tmp_path, "exact", {}, [("Answer: Paris", "Paris", 1.0, {})])
    line, message = FAULTS["bad-json"]
    with (tmp_path / "tasks.jsonl").open("a") as fh:
        fh.write(line)
    done = evoarena("run", spec.name, "--run-dir", "run", *flags, cwd=tmp_path)
    assert done.returncode == 2 and not (tmp_path / "run").exists()
    assert done.stderr == f"error: {message}\n"
    assert done.stdout == ""  # no banner, no roles


@pytest.mark.parametrize("fault", ["missing-field", "bad-split"])
def test_other_data_errors_come_before_the_banner_too(project: Path, fault: str) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    spec = write_project(project, "exact", {}, [("Answer: Paris", "Paris", 1.0, {})])
    line, message = FAULTS[fault]
    with (project / "tasks.jsonl").open("a") as fh:
        fh.write(line)
    result = CliRunner().invoke(app, ["run", spec.name, "--run-dir", "run", "--no-probe"])
    assert result.exit_code == 2 and not (project / "run").exists()
    assert result.stderr.startswith(f"error: {message}") and result.stderr.count("\n") == 1
    assert result.stdout == ""
