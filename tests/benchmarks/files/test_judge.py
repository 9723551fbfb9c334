"""The files benchmark's LLM `judge` grader: the spec's `judge` role grades through the ledger (phase "grading",
cached, outside every budget, memoised per task and answer), a strict final `Score:` line, an unreadable reply
recorded as an ungraded attempt (never a silent 0 or 1), no handle for methods, and a spec without a judge refused."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.judge import read_score
from evoarena.protocol.run.cell import ProviderUnavailable
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import SpecError, parse_spec
from evoarena.store import RunStore
from evoarena.store.calls import conversation, find_calls

HERE = Path(__file__).parent
# (what the solver says, the reference): two right, two wrong
CASES = [("Answer: It is Paris.", "Paris"), ("Answer: 42", "42"), ("Answer: Lyon", "Paris"), ("Answer: 41", "42")]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    rows = [{"input": f"Task {i}: SAY {json.dumps(says)}", "answer": ref, "part": "test"}
            for i, (says, ref) in enumerate(CASES)]
    rows += [{"input": f"{s} task: SAY {json.dumps('Answer: Rome')}", "answer": "Rome", "part": s}
             for s in ("train", "val")]
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    yield tmp_path


def spec_for(judge: str | None, methods: list[dict[str, Any]] | None = None, **params: Any) -> Any:
    roles = {"solver": "solver", **({"judge": "judge"} if judge else {})}
    return parse_spec({
        "name": "judged",
        "benchmark": {"name": "files", "params": {"path": "tasks.jsonl", "split": "part", "grader": "judge",
                                                  **params}},
        "methods": methods or [{"name": "frozen"}],
        "models": {"solver": {"backend": "scripted", "model": "judge_players:solver"},
                   "judge": {"backend": "scripted", "model": f"judge_players:{judge or 'fair'}"}},
        "roles": roles,
        "budget": {"max_calls": 50},
    })


def run(spec: Any, where: Path) -> dict[str, Any]:
    results: dict[str, Any] = run_experiment(spec, where, search=(HERE,))
    return results


def judge_calls(where: Path) -> list[Any]:
    return find_calls(RunStore(where), role="judge", limit=None)


@pytest.mark.parametrize(("line", "score"), [
    ("Score: 1", 1.0), ("Score: 0.25", 0.25), ("**Score:** 0", 0.0), ("score = .5", 0.5), ("Score: 1/1", 1.0),
    ("PASS", 1.0), ("Verdict: FAIL", 0.0), ("`Score: 0.8`", 0.8),
    ("Score: 1.5", None), ("Score: 0.8 because it is close", None), ("I give it a 1", None), ("", None),
])
def test_the_score_line_is_read_strictly(line: str, score: float | None) -> None:
    value, why = read_score(f"Some reasoning first.\n{line}")
    assert value == score and (why == "") == (score is not None)


def test_the_judge_role_grades_through_the_ledger_once_per_task_and_answer(project: Path) -> None:
    methods = [{"name": "frozen"}, {"name": "frozen", "label": "frozen-again"}]
    results = run(spec_for("fair", methods), project / "run")
    for condition in results["conditions"]:
        test = condition["test"]
        assert (test["n_graded"], test["n_errors"], test["mean"]) == (4, 0, 0.5)
    calls = judge_calls(project / "run")
    store = RunStore(project / "run")
    graded = store.query("SELECT DISTINCT task_id, answer FROM attempts")
    assert len(calls) == len(graded) == 6  # 4 test + train + val, once each although two conditions graded them
    assert {(c.phase, c.model, c.cached) for c in calls} == {("grading", "judge", 0)}
    cells = {c["cell"] for c in store.cells()}
    assert all(c.cell in cells and c.unit for c in calls)  # each call is filed under the cell and unit it graded
    assert {c.unit.split("/")[0] for c in calls if c.unit} == {"practice", "select", "test"}
    shown = conversation(store, calls[-1].id)
    assert shown is not None and shown.messages is not None
    assert "Reference answer:\n" in shown.messages[0].content and "Answer to grade:\n" in shown.messages[0].content
    for budget in results["budgets"]:  # the judge's calls spend no method's budget
        assert budget["used"]["calls"] == 2  # frozen: one practice attempt, one val attempt


def test_the_judge_decides_not_the_reference(project: Path) -> None:
    results = run(spec_for("contrary"), project / "run")
    assert results["conditions"][0]["test"]["mean"] == 0.5
    store = RunStore(project / "run")
    rows = store.query("SELECT answer, score FROM attempts WHERE phase='test' ORDER BY task_id")
    assert {r["answer"]: r["score"] for r in rows} == {  # the judge reads the whole output (parse: full)
        "Answer: It is Paris.": 0.0, "Answer: 42": 0.0, "Answer: Lyon": 1.0, "Answer: 41": 1.0}


def test_an_unreadable_judge_reply_is_an_error_never_a_score(project: Path) -> None:
    results = run(spec_for("garbled"), project / "run")
    test = results["conditions"][0]["test"]
    assert (test["n_graded"], test["n_errors"]) == (0, 4)
    store = RunStore(project / "run")
    rows = store.query("SELECT score, passed, error FROM attempts WHERE phase='test'")
    assert all(r["score"] is None and r["passed"] is None for r in rows)
    assert all("unreadable reply: its last line 'Looks fine to me" in r["error"] for r in rows)
    assert all(r["error"].startswith("judge call ") for r in rows)  # names the ledger row of the reply


def test_a_comment_that_names_the_reference_is_withheld(project: Path) -> None:
    bench = FilesBenchmark(path="tasks.jsonl", split="part", grader="judge", pass_threshold=0.2)
    tasks = [t for t in bench.build() if t.split == "test"]

    class Leaky:
        role = "judge"
        from evoarena.models import GenParams

        default_params = GenParams()

        def complete(self, messages: Any, params: Any = None, *, sample_index: int = 0) -> Any:
            from evoarena.models import Completion, Usage

            sys.path.insert(0, str(HERE))
            import judge_players

            return Completion(judge_players.leaky(list(messages), params), Usage(1, 1))

    bench.bind_grader({"judge": Leaky()})
    feedback = bench.grade(tasks[2], "Lyon")
    assert (feedback.score, feedback.passed) == (0.25, True)
    assert "Paris" not in feedback.message and "withheld" in feedback.message


def test_methods_get_no_handle_to_the_judge(project: Path) -> None:
    run(spec_for("fair", [{"name": "judge_players:Peeker"}]), project / "run")
    peeks = RunStore(project / "run").query("SELECT payload FROM events WHERE kind='peek'")
    assert peeks and all("not mapped" in json.loads(p["payload"])["reached"] for p in peeks)


def test_a_spec_without_a_judge_role_is_refused_before_anything_is_written(project: Path) -> None:
    with pytest.raises(SpecError) as err:
        run(spec_for(None), project / "run")
    assert str(err.value) == ("roles.judge: the benchmark grades with a 'judge' model; map it in `roles:` "
                              "(judge: <one of judge, solver>)")
    assert not (project / "run").exists()


def test_a_users_rubric_replaces_the_default(project: Path) -> None:
    (project / "rubric.md").write_text("Q: {{ question }}\nGold: {{ reference }}\nRow: {{ row.part }}\n"
                                       "Reference answer:\n{{ reference }}\nAnswer to grade:\n{{ answer }}\n\n"
                                       "Decide, then end with Score: 0..1\n")
    run(spec_for("fair", rubric="rubric.md"), project / "run")
    store = RunStore(project / "run")
    shown = conversation(store, judge_calls(project / "run")[0].id)
    assert shown is not None and shown.messages is not None
    assert shown.messages[0].content.startswith("Q: train task: SAY") and "Row: train\n" in shown.messages[0].content


@pytest.mark.parametrize(("params", "message"), [
    ({"rubric": "nope.md"}, "benchmark.params.rubric: no such file 'nope.md'"),
    ({"rubric": "bad.md"}, "benchmark.params.rubric: bad.md uses unknown field(s) gold (known: question, answer"),
    ({"grader": "exact", "rubric": "bad.md"}, "benchmark.params.rubric: applies to the judge grader, not 'exact'"),
    ({"judge_max_tokens": 0}, "benchmark.params (files).judge_max_tokens: must be at least 1 "
                              "(got 0)"),
])
def test_bad_judge_params_are_refused_in_one_line(project: Path, params: dict[str, Any], message: str) -> None:
    (project / "bad.md").write_text("{{ answer }} vs {{ gold }}")
    with pytest.raises(SpecError) as err:
        run(spec_for("fair", **params), project / "run")
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_a_judge_outage_stops_the_run_and_resume_finishes_it(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`on_provider_error: stop` holds for the judge too, though it grades for every cell: nothing is graded
    while it is down, and the same command finishes the run once it is back."""
    flag = project / "judge-down"
    monkeypatch.setenv("EVOARENA_TEST_JUDGE_DOWN", str(flag))
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(project / "cache"))
    spec = spec_for("down")
    spec = spec.model_copy(update={"models": {**spec.models, "judge": spec.models["judge"].model_copy(
        update={"max_retries": 0})}})
    flag.touch()
    with pytest.raises(ProviderUnavailable, match="run the same command again"):
        run(spec, project / "run")
    store = RunStore(project / "run")
    assert [c.error for c in judge_calls(project / "run")][:1] and all(
        c.error and "503" in c.error for c in judge_calls(project / "run"))
    graded = store.query("SELECT COUNT(*) AS n FROM attempts WHERE phase IN ('select', 'test')")[0]["n"]
    assert graded == 0  # nothing the judge could not grade was kept as a score or an error
    flag.unlink()
    resumed = run(spec, project / "run")
    fair = run(spec_for("fair"), project / "fair")
    assert [c["test"] for c in resumed["conditions"]] == [c["test"] for c in fair["conditions"]]
    assert resumed["conditions"][0]["test"]["n_errors"] == 0
