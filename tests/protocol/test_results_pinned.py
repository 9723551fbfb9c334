"""Results stay what they were: three recipes (the scripted arith-basics, clr-methods narrowed to two chains with all
its 21 conditions, skillprox-sheets narrowed to 22 tasks) give the results.json that the code before the core
redesign gave (c1e204e), timestamps, latencies, code version, isolation level and plot pixels aside; a fourth,
gepa-proposals (GEPA's P x N proposals per iteration), gives the one pinned when that mode was added.

Regenerate a golden file only for a change that is meant to move results, and say so in the commit:
`python tests/protocol/test_results_pinned.py NAME` rewrites golden/NAME.json from a fresh run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from evoarena.protocol.catalog import method_class
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, MethodSpec, load_spec

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
GOLDEN = Path(__file__).resolve().parent / "golden"
VOLATILE = {"started_at", "finished_at", "code_version", "latency_s", "isolation"}


def lexical(m: MethodSpec) -> MethodSpec:
    """A method with a `retriever` param pinned to `lexical`: `auto` picks the embedding retriever where the
    `retrieval` extra is installed, and the golden files were made without it."""
    if "retriever" not in method_class(m.name).defaults:
        return m
    return m.model_copy(update={"params": {**m.params, "retriever": "lexical"}})


def narrowed(name: str) -> ExperimentSpec:
    spec = load_spec(RECIPES / f"{name}.yaml").with_model("scripted")
    narrower = {"clr-methods": {"chains": 2}, "skillprox-sheets": {"tasks": 22}}.get(name, {})
    params = {**spec.benchmark.params, **narrower}
    return spec.model_copy(update={"benchmark": spec.benchmark.model_copy(update={"params": params}),
                                   "methods": [lexical(m) for m in spec.methods]})


def normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    if isinstance(value, str) and value.startswith("iVBOR"):
        return "<png>"
    return value


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", ["arith-basics", "clr-methods", "skillprox-sheets", "gepa-proposals"])
def test_results_are_what_they_were(name: str, tmp_path: Path) -> None:
    got = normalised(run_experiment(narrowed(name), tmp_path / "run"))
    want = json.loads((GOLDEN / f"{name}.json").read_text("utf-8"))
    assert json.dumps(got, sort_keys=True, indent=1) == json.dumps(want, sort_keys=True, indent=1)


if __name__ == "__main__":  # regenerate: python tests/protocol/test_results_pinned.py NAME [RESULTS_JSON]
    target = sys.argv[1]
    if len(sys.argv) > 2:
        data = json.loads(Path(sys.argv[2]).read_text("utf-8"))
    else:
        import os
        import tempfile

        os.environ["EVOARENA_CACHE_DIR"] = tempfile.mkdtemp()  # an empty response cache, as the test has
        data = run_experiment(narrowed(target), Path(tempfile.mkdtemp()) / "run")
    (GOLDEN / f"{target}.json").write_text(json.dumps(normalised(data), sort_keys=True, indent=1) + "\n")
