"""docs/extending.md is true: its method, benchmark and policy run by `module:Name` from a directory outside the
package, and as an installed plugin found through the `evoarena.plugins` entry point; bad specs fail fast."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
EVOARENA = [sys.executable, "-m", "evoarena.cli"]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text("utf-8"), re.S | re.M)


def write_example(where: Path) -> Path:
    method, bench, policy = blocks("python")[:3]
    (where / "my_methods.py").write_text(method)
    (where / "my_bench.py").write_text(bench)
    (where / "my_policy.py").write_text(policy)
    spec = where / "backwards.yaml"
    spec.write_text(blocks("yaml")[0])
    return spec


def evoarena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only what the test puts there
    full_env.update(env or {})
    return subprocess.run([*EVOARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=full_env)


def conditions(results: dict[str, object]) -> dict[str, float]:
    return {c["condition"]: c["test"]["mean"] for c in results["conditions"]}  # type: ignore[index, union-attr]


def test_the_documented_examples_are_short_and_typed() -> None:
    method, bench, _ = blocks("python")[:3]
    assert len(method.splitlines()) <= 40 and len(bench.splitlines()) <= 40
    assert "class Params(Method.Params):" in method and "self.params.max_tips" in method
    assert "class Params(Benchmark.Params):" in bench and "defaults" not in bench


def test_a_method_and_a_benchmark_from_a_directory_outside_the_package(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    spec = write_example(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # run from another directory: the spec's own directory is searched for module:Name
    done = evoarena("run", str(spec), "--run-dir", str(tmp_path / "run"), "--json", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert results["evidence"] == "mechanism"
    assert conditions(results) == {"frozen": 0.0, "tipper": 1.0}
    tips = [c for c in results["conditions"] if c["condition"] == "tipper"][0]
    assert tips["test"]["n_graded"] == 10


def test_a_plugin_installed_through_its_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    pkg = site / "tipper_plugin"
    pkg.mkdir(parents=True)
    method, bench, policy = blocks("python")[:3]
    (pkg / "methods.py").write_text(method)
    (pkg / "bench.py").write_text(bench)
    (pkg / "player.py").write_text(policy)
    (pkg / "__init__.py").write_text(
        "from evoarena import benchmark, method, policy\n"
        "from tipper_plugin.bench import Backwards\nfrom tipper_plugin.methods import Tipper\n"
        "from tipper_plugin.player import player\n\n"
        'method("tipper")(Tipper)\nbenchmark("backwards")(Backwards)\npolicy("backwards-player")(player)\n'
    )
    dist = site / "tipper_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tipper-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[evoarena.plugins]\ntipper = tipper_plugin\n")
    spec = tmp_path / "plugin.yaml"
    spec.write_text(
        "name: plugin\nbenchmark: {name: backwards}\nmethods: [{name: frozen}, {name: tipper}]\n"
        "models: {s: {backend: scripted, model: backwards-player}}\nroles: {solver: s, tipper: s}\n"
    )
    env = {"PYTHONPATH": str(site)}
    listed = evoarena("list", "methods", "--json", cwd=tmp_path, env=env)
    assert listed.returncode == 0, listed.stderr
    origin = {r["name"]: r["origin"] for r in json.loads(listed.stdout)}
    assert origin["tipper"] == "plugin:tipper" and origin["reflexion"] == "builtin"
    done = evoarena("run", str(spec), "--run-dir", str(tmp_path / "run"), "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert conditions(json.loads(done.stdout)) == {"frozen": 0.0, "tipper": 1.0}


def test_the_documented_methods_typed_params_refuse_a_bad_value_in_one_line(tmp_path: Path) -> None:
    spec = write_example(tmp_path)
    done = evoarena("run", str(spec), "--set", "methods.1.params.max_tips=0", "--run-dir", str(tmp_path / "run"),
                    cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: methods.1: methods.my_methods:Tipper.params.max_tips: must be at least "
                                   "1 (got 0)")
    assert not (tmp_path / "run").exists()


def test_a_misspelled_method_fails_fast_with_a_suggestion_and_writes_nothing(tmp_path: Path) -> None:
    recipe = (Path(__file__).resolve().parents[1] / "recipes" / "arith-basics.yaml").read_text()
    spec = tmp_path / "typo.yaml"
    spec.write_text(recipe.replace("name: reflexion", "name: refelxion"))
    start = time.monotonic()
    done = evoarena("run", str(spec), "--model", "scripted", "--run-dir", str(tmp_path / "run"), cwd=tmp_path)
    elapsed = time.monotonic() - start
    assert done.returncode == 2
    assert "did you mean 'reflexion" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
    assert elapsed < 5.0  # the whole process, interpreter start-up included; the check itself is in-process below


def test_the_spec_check_itself_takes_well_under_a_second(make_spec: object) -> None:
    from evoarena.protocol.catalog import catalog
    from evoarena.protocol.validate import validate_spec
    from evoarena.spec import SpecError

    catalog()  # loaded once per process
    spec = make_spec(methods=[{"name": "refelxion"}])  # type: ignore[operator]
    start = time.monotonic()
    with pytest.raises(SpecError, match=r"methods\.0\.name: unknown method 'refelxion' — did you mean 'reflexion'\?"):
        validate_spec(spec)
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize(("change", "message"), [
    ({"benchmark": {"name": "arithm"}}, r"benchmark\.name: unknown benchmark 'arithm' — did you mean 'arith'\?"),
    ({"benchmark": {"name": "arith", "params": {"n_trian": 3}}}, r"unknown param 'n_trian' — did you mean 'n_train'\?"),
    ({"benchmark": {"name": "arith", "params": {"n_train": "six"}}}, r"n_train: must be an integer"),
    ({"methods": [{"name": "reflexion", "params": {"max_trials": True}}]},
     r"max_trials: must be an integer"),
    ({"models": {"scripted": {"backend": "scripted", "model": "arith-studnet"}}},
     r"models\.scripted\.model: unknown policy 'arith-studnet' — did you mean 'arith-student'\?"),
    ({"budget": {"max_calls": -1}}, r"budget\.max_calls"),
])
def test_a_bad_spec_is_refused_before_anything_is_written(tmp_path: Path, make_spec: object, change: dict[str, object],
                                                          message: str) -> None:
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.spec import SpecError

    with pytest.raises(SpecError, match=message):
        run_experiment(make_spec(**change), tmp_path / "run")  # type: ignore[operator]
    assert not (tmp_path / "run").exists()


def test_seeds_that_are_not_integers_are_one_line(tmp_path: Path) -> None:
    recipe = Path(__file__).resolve().parents[1] / "recipes" / "arith-basics.yaml"
    done = evoarena("run", str(recipe), "--model", "scripted", "--seeds", "a,b", "--run-dir", str(tmp_path / "r"),
                    cwd=tmp_path)
    assert done.returncode == 2 and "--seeds: expected comma-separated integers" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
