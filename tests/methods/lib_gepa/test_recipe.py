"""`recipes/gepa-vs-library.yaml` as shipped, on the scripted model (evidence: mechanism)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import load_spec

pytest.importorskip("gepa")

RECIPE = Path(__file__).resolve().parents[3] / "recipes" / "gepa-vs-library.yaml"


def test_gepa_and_the_gepa_library_side_by_side(tmp_path: Path) -> None:
    """The recipe runs unchanged (2 to 3 s, over the 2 s line because it is the recipe as shipped: three cells of
    12 practice steps and 40 test tasks): evoarena's `gepa` and the library both beat frozen with the same roles and
    budget, the library accepts a proposal, and the library's condition carries its version."""
    results = run_experiment(load_spec(RECIPE).with_model("scripted"), tmp_path / "run", probe=False)
    acc = {c["condition"]: c["test"]["mean"] for c in results["conditions"]}
    assert acc["gepa"] > acc["frozen"] and acc["gepa.optimize"] > acc["frozen"]
    (cell,) = results["views"]["gepa.optimize"]["cells"]
    assert cell["accepted"] >= 1 and cell["stopped_by"] is None
    assert results["meta"]["extra"]["libraries"] == {"gepa.optimize": "gepa 0.1.4"}
