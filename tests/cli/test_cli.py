"""The command line, through Typer's runner, on a scripted run (evidence: mechanism)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from own_process import strongest
from typer.testing import CliRunner

from evoarena.cli import app

runner = CliRunner()
RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("cli") / "run"
    result = runner.invoke(app, ["run", str(RECIPE), "--model", "scripted", "--run-dir", str(target), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["evidence"] == "mechanism"
    return target


def test_arith_basics_recipe_runs_with_scripted_model(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    assert {c["condition"] for c in results["conditions"]} == {"frozen", "reflexion", "bootstrap_fewshot"}
    assert "evidence: mechanism" in (run_dir / "report.html").read_text()


@pytest.mark.skipif(strongest() != "bwrap", reason="--certified needs bubblewrap (make system-deps); "
                    "tests/security/test_certified.py checks that it refuses without")
def test_certified_run_isolates_methods_and_gives_the_same_science(run_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "certified"
    result = runner.invoke(app, ["run", str(RECIPE), "--model", "scripted", "--certified", "--run-dir", str(target),
                                 "--json"])
    assert result.exit_code == 0, result.output
    certified = json.loads(result.stdout)
    plain = json.loads((run_dir / "results.json").read_text())
    assert certified["meta"]["extra"]["method_isolation"]["mode"] == "process"
    assert "method_isolation" not in plain["meta"]["extra"]
    assert certified["meta"]["spec_hash"] != plain["meta"]["spec_hash"]  # a certified run is a run of its own
    assert [c["test"] for c in certified["conditions"]] == [c["test"] for c in plain["conditions"]]


def test_show_json(run_dir: Path) -> None:
    result = runner.invoke(app, ["show", str(run_dir), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["run"]["status"] == "finished" and data["run"]["evidence"] == "mechanism"
    assert data["run"]["isolation"]
    assert len(data["cells"]) == 3 and all(c["selected_version"] for c in data["cells"])
    assert {r["role"] for r in data["calls_by_role"]} == {"solver", "reflector"}


def test_versions_diff_checkout_rollback(run_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["versions", str(run_dir), "--cell", "reflexion__scripted__s0", "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)["reflexion__scripted__s0"]
    first, last = rows[0]["id"], rows[-1]["id"]
    assert first != last
    by_prefix = runner.invoke(app, ["versions", str(run_dir), "--cell", "reflexion", "--json"])
    assert by_prefix.exit_code == 0 and json.loads(by_prefix.stdout) == json.loads(result.stdout)
    refused = runner.invoke(app, ["versions", str(run_dir), "--cell", "nope"])
    assert refused.exit_code != 0 and "no cell 'nope'" in refused.output
    diff = runner.invoke(app, ["diff", str(run_dir), first[:8], last[:8]])
    assert diff.exit_code == 0 and "+++ " in diff.stdout and "memory/reflections.md" in diff.stdout
    dest = tmp_path / "checkout"
    assert runner.invoke(app, ["checkout", str(run_dir), last[:8], str(dest)]).exit_code == 0
    assert (dest / "memory" / "reflections.md").is_file()
    back = runner.invoke(app, ["rollback", str(run_dir), "reflexion__scripted__s0", first[:8]])
    assert back.exit_code == 0
    assert not (run_dir / "cells" / "reflexion__scripted__s0" / "harness" / "memory" / "reflections.md").exists()


def test_calls_and_ls_json(run_dir: Path) -> None:
    calls = runner.invoke(app, ["calls", str(run_dir), "--limit", "5", "--json"])
    assert calls.exit_code == 0 and len(json.loads(calls.stdout)) == 5
    listing = runner.invoke(app, ["ls", str(run_dir.parent), "--json"])
    assert listing.exit_code == 0 and json.loads(listing.stdout)[0]["name"] == "arith-basics"


def test_report_rebuilds_identical_results(run_dir: Path) -> None:
    before = (run_dir / "results.json").read_text()
    assert runner.invoke(app, ["report", str(run_dir), "--json"]).exit_code == 0
    assert (run_dir / "results.json").read_text() == before


def test_bad_spec_and_bad_run_dir_give_one_line_errors(tmp_path: Path) -> None:
    spec = yaml.safe_load(RECIPE.read_text())
    spec["models"]["embedded"]["backend"] = "gpt"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(spec))
    result = runner.invoke(app, ["run", str(bad)])
    assert result.exit_code == 2 and "models.embedded.backend" in result.output
    result = runner.invoke(app, ["show", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "not a run directory" in result.output


def test_input_errors_are_one_line_and_write_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 12 item 5: a missing API-key variable, a bad --seeds and malformed YAML each fail in one line that
    names the culprit (the variable, the flag, file:line:column), before a run directory exists."""
    monkeypatch.delenv("EVOARENA_TEST_MISSING_KEY", raising=False)
    spec = yaml.safe_load(RECIPE.read_text())
    spec["models"] = {"api": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                              "api_key_env": "EVOARENA_TEST_MISSING_KEY"}}
    spec["roles"] = {role: "api" for role in spec["roles"]}
    keyless = tmp_path / "keyless.yaml"
    keyless.write_text(yaml.safe_dump(spec))
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nbenchmark: {name: arith\nmethods: [frozen]\n")
    target = tmp_path / "run"
    cases = [
        (["run", str(keyless), "--no-probe"], "error: models.api: openai backend: environment variable "
                                              "EVOARENA_TEST_MISSING_KEY (named by api_key_env) is not set"),
        (["run", str(RECIPE), "--seeds", "a,b"], "error: --seeds: expected comma-separated integers, got 'a,b'"),
        (["run", str(broken)], f"error: {broken}:3:8: not valid YAML ("),
        (["run", str(RECIPE), "--set", "benchmark.params.seed"], "error: --set 'benchmark.params.seed': expected "
                                                                   "KEY=VALUE"),
        (["run", str(RECIPE), "--set", "methods.9.params.x=1"], "error: --set methods.9.params.x: methods.9 is not an "
                                                                  "index of a list of"),
        (["run", str(RECIPE), "--set", "name.x=1"], "error: --set name.x: name is a value"),
        (["run", str(RECIPE), "--set", "benchmark.params.n_test=-3"], "error: "),  # the spec's own check, one line
    ]
    for args, first in cases:
        result = runner.invoke(app, [*args, "--run-dir", str(target)])
        errors = [ln for ln in result.output.splitlines() if ln.startswith("error")]
        assert result.exit_code == 2 and len(errors) == 1 and errors[0].startswith(first), result.output
        assert "Traceback" not in result.output and "│" not in result.output  # no traceback, plain or rich
        assert not target.exists()


def test_clr_build_into_a_directory_is_byte_identical(tmp_path: Path) -> None:
    outputs = []
    for name in ("a", "b"):
        result = runner.invoke(app, ["clr", "build", "--seed", "0", "--out", str(tmp_path / name)])
        assert result.exit_code == 0 and "20 chains, 10 domains, 80 rules" in result.output
        outputs.append((tmp_path / name / "release-0.json").read_bytes())
    assert outputs[0] == outputs[1]


def test_clr_build_and_certify_with_a_model_that_knows_nothing(tmp_path: Path) -> None:
    rel = tmp_path / "rel.json"
    assert runner.invoke(app, ["clr", "build", "--out", str(rel)]).exit_code == 0
    assert json.loads(rel.read_text())["certified"] is False
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "c", "benchmark": {"name": "clr"}, "methods": [{"name": "frozen"}],
                                    "models": {"echo": {"backend": "scripted", "model": "echo"}},
                                    "roles": {"solver": "echo"}}))
    out = tmp_path / "cert.json"
    result = runner.invoke(app, ["clr", "certify", str(spec), "--model", "echo", "--release", str(rel), "--out",
                                 str(out), "--no-replace", "--run-dir", str(tmp_path / "certrun")])
    assert result.exit_code == 0, result.output
    cert = json.loads(out.read_text())
    assert cert["certified"] is False and len(cert["certification"]["failed"]) == 80


def test_set_changes_the_spec_before_it_is_read(tmp_path: Path) -> None:
    """`--set KEY=VALUE` (dotted path, YAML value) is applied to the spec's file before validation: here another
    benchmark seed and a method's param, both in the stored spec and its hash."""
    from evoarena.store import RunStore, queries

    args = ["run", str(RECIPE), "--model", "scripted", "--no-probe", "--run-dir", str(tmp_path / "run"), "--set",
            "benchmark.params.seed=7", "--set", "methods.0.label=static"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    row = queries.run(RunStore(tmp_path / "run"))
    assert row is not None and row.spec is not None
    assert row.spec["benchmark"]["params"]["seed"] == 7 and row.spec["methods"][0]["label"] == "static"
    plain = runner.invoke(app, ["run", str(RECIPE), "--model", "scripted", "--no-probe", "--run-dir",
                                str(tmp_path / "plain")])
    assert plain.exit_code == 0, plain.output
    unset = queries.run(RunStore(tmp_path / "plain"))
    assert unset is not None and unset.spec is not None and unset.spec["benchmark"]["params"]["seed"] != 7
    assert row.spec_hash != unset.spec_hash



def test_the_run_says_which_model_plays_each_role_and_where_the_solvers_stands_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ACE plays a curator the spec leaves unmapped: the start of the run says the solver's model plays it. The
    spec is validated once: the run gets the answer the banner was printed from."""
    from evoarena.protocol import validate
    from evoarena.protocol.run import cell_work

    checked: list[str] = []
    original = validate.validate_run

    def counted(spec: Any, search: Any) -> Any:
        checked.append(spec.name)
        return original(spec, search)

    monkeypatch.setattr(validate, "validate_run", counted)
    monkeypatch.setattr(cell_work, "validate_run", counted)
    spec = {"name": "banner", "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 1,
                                                                        "n_test": 2}},
            "methods": [{"name": "frozen"}, {"name": "ace", "roles": {"reflector": "r"}}],
            "models": {"s": {"backend": "scripted", "model": "arith-student"},
                       "r": {"backend": "scripted", "model": "arith-student"}},
            "roles": {"solver": "s"}}
    path = tmp_path / "roles.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = runner.invoke(app, ["run", str(path), "--no-probe", "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    lines = [ln.strip() for ln in result.output.splitlines() if ln.strip().startswith("roles ")]
    assert lines == ["roles  frozen: solver → s",
                     "roles  ace: solver → s, reflector → r, curator → s (unmapped: the solver's model)"]
    assert checked == ["banner"]
    assert "test accuracy (evidence: mechanism)" in result.output and "ace (s):" in result.output


def test_list_methods_shows_each_methods_roles() -> None:
    result = runner.invoke(app, ["list", "methods", "--json"])
    assert result.exit_code == 0
    roles = {row["name"]: row["roles"] for row in json.loads(result.stdout)}
    assert roles["frozen"] == ["solver"] and roles["ace"] == ["solver", "reflector", "curator"]
    table = runner.invoke(app, ["list", "methods"], env={"COLUMNS": "300"})
    assert "reflector, curator" in table.output


@pytest.mark.parametrize("kind", ["methods", "benchmarks"])
def test_list_json_prints_each_declared_param(kind: str) -> None:
    result = runner.invoke(app, ["list", kind, "--json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)
    for row in rows:
        assert sorted(f["name"] for f in row["fields"]) == sorted(row["params"])  # every param
        assert all(set(f) == {"name", "type", "default", "allowed", "range", "description"} for f in row["fields"])
    fields = {(row["name"], f["name"]): f for row in rows for f in row["fields"]}
    if kind == "benchmarks":
        assert fields[("arith", "n_test")]["range"] == ">= 1"
        assert fields[("arith", "n_test")]["default"] == 25 and fields[("arith", "n_test")]["type"] == "int"
