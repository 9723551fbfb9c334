"""The conditions page's transfer matrix and score-vs-spend charts: shown from results.json when the run has them
(the matrix's numbers and CIs as results.json has them, the diagonal marked as the run's own test; a chart per
spend axis with its CI band), absent — without an error — when it has not."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from evoarena.protocol.run.reporting import rebuild_report
from evoarena.protocol.run.runner import run_experiment
from evoarena.protocol.run.transfer import run_transfer
from evoarena.spec import parse_spec
from evoarena.store import RunStore
from evoarena.viewer import create_app

PRICE = {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
MODELS = {"scripted": {"backend": "scripted", "model": "arith-student", "price": PRICE},
          "twin": {"backend": "scripted", "model": "arith-student"}}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted run with spend curves on, then graded by a second model (a transfer)."""
    where = tmp_path_factory.mktemp("transfer-spend") / "ts"
    spec = parse_spec({
        "name": "ts", "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
        "methods": [{"name": "frozen"}, {"name": "reflexion"}], "models": MODELS,
        "roles": {"solver": "scripted", "reflector": "scripted"}, "seeds": [0],
        "protocol": {"select_every": 2, "spend_curves": True}})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(where.parent / "cache"))
        run_experiment(spec, where, probe=False)
        run_transfer(where, "twin")
        store = RunStore(where)
        try:
            rebuild_report(store)
        finally:
            store.close()
    return where


def _cell(html: str, condition: str, tested: str) -> str:
    row = re.search(rf'<tr data-condition="{condition}" data-model="scripted">(.*?)</tr>', html, re.S)
    assert row is not None
    cell = re.search(rf'<td class="num[^"]*" data-tested="{tested}">(.*?)</td>', row.group(1), re.S)
    assert cell is not None
    return cell.group(0)


def test_the_transfer_matrix_and_the_spend_curves_are_results_json(run_dir: Path) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    html = TestClient(create_app([run_dir])).get("/run/ts/conditions").text
    transfer = html[html.index('id="transfer"'):html.index("</table>", html.index('id="transfer"'))]
    assert results["transfer"]["models"] == ["scripted", "twin"]
    for t in results["transfer"]["cells"]:
        cell = _cell(transfer, t["condition"], t["tested_on"])
        assert f'data-mean="{t["mean"]}"' in cell and f'[{t["ci_low"]:.3f}, {t["ci_high"]:.3f}]' in cell
        assert ("own test" in cell) == (t["tested_on"] == t["evolved_on"])
    own = {(c["condition"], c["model"]): c["test"]["mean"] for c in results["conditions"]}
    for t in results["transfer"]["cells"]:
        if t["tested_on"] == t["evolved_on"]:
            assert t["mean"] == pytest.approx(own[(t["condition"], t["evolved_on"])])
    spend = results["spend_curves"]
    assert f'id="spend-curves" data-split="{spend["split"]}"' in html
    axes = {c["axis"] for c in spend["curves"]}
    assert axes == {"calls", "tokens", "usd"}  # the solver has a price: a dollar axis too
    for axis in axes:
        assert f'id="spend-{axis}"' in html


def test_a_run_without_them_has_no_such_panels(run_dir: Path, tmp_path: Path) -> None:
    data = json.loads((run_dir / "results.json").read_text())
    bare = tmp_path / "bare"
    shutil.copytree(run_dir, bare)
    del data["transfer"], data["spend_curves"]
    (bare / "results.json").write_text(json.dumps(data))
    response = TestClient(create_app([bare])).get("/run/bare/conditions")
    assert response.status_code == 200 and 'id="scores"' in response.text
    assert 'id="transfer"' not in response.text and 'id="spend-curves"' not in response.text


def test_the_matrix_marks_only_the_diagonal(run_dir: Path) -> None:
    html = TestClient(create_app([run_dir])).get("/run/ts/fragments/conditions").text
    assert html.count("own-mark") == 2  # frozen and reflexion, each tested on its own model once
