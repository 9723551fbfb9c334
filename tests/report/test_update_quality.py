"""Update quality per condition × role: the replies an update role gave during practice and the rejected ones by
kind, in results.json, the run summary and report.html — from a run whose proposer asks for input and whose reflector
returns its prompt."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import policy
from evoarena.cli.results import print_results
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.report.results_record import RunResults
from evoarena.scripted.arith import arith_student

ASKS = "Certainly! Please provide the inputs for the new task."


@policy("test-quality-asker")
def asker(messages: Sequence[Message], params: GenParams) -> str:
    """Proposes nothing: the reply the 1.5B gave GEPA 17 times out of 19 on a counting benchmark."""
    return ASKS if "I provided an assistant" in messages[-1].content else arith_student(messages, params)


@policy("test-quality-echo")
def echo(messages: Sequence[Message], params: GenParams) -> str:
    """The reflector returns its prompt."""
    text = messages[-1].content
    return text if "self-reflection" in text else arith_student(messages, params)


def test_update_quality_counts_each_kind_per_condition_and_role(tmp_path: Path, make_spec: Any, capsys: Any) -> None:
    spec = make_spec(methods=[{"name": "frozen"}, {"name": "gepa"},
                              {"name": "reflexion", "params": {"max_chars": 5000}}],
                     models={"a": {"backend": "scripted", "model": "test-quality-asker"},
                             "e": {"backend": "scripted", "model": "test-quality-echo"}},
                     roles={"solver": "a", "proposer": "a", "reflector": "e"})
    got = RunResults.model_validate(run_experiment(spec, tmp_path / "run", probe=False))
    rows = {(q.condition, q.role): q for q in got.update_quality}
    assert set(rows) == {("gepa", "proposer"), ("reflexion", "reflector")}  # frozen has no update role
    gepa, refl = rows[("gepa", "proposer")], rows[("reflexion", "reflector")]
    assert gepa.replies > 0 and (gepa.refused, gepa.usable, gepa.echo, gepa.malformed) == (gepa.replies, 0, 0, 0)
    assert refl.replies > 0 and (refl.echo, refl.usable, refl.refused) == (refl.replies, 0, 0)
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text("utf-8"))["update_quality"]
    assert [r["role"] for r in on_disk] == ["proposer", "reflector"]  # spec order
    html = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert 'id="update-quality"' in html and html.count('class="probe-warning"') >= 2  # both rows under half usable
    print_results(got)
    summary = " ".join(capsys.readouterr().out.split())
    assert "update quality" in summary and "proposer" in summary
