"""HGM's search with scripted models (evidence: mechanism): expansions only from evaluated nodes with a mean above 0,
the tree grown by n_evals^0.6 >= nodes - 1 + pending, each node's own results kept apart from its clade's, every
evaluation a rollout, malformed proposer output rejected, the live harness the best posterior mean."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.harness.state import HarnessStateError, state_text
from evoarena.methods.hgm.method import STATE, read_tree
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.search import expand_now, posterior_mean
from evoarena.store import RunStore

DIAGNOSE = "identify ONE change to the harness"
IMPROVE = "Requested change:"


def _between(text: str, name: str) -> str:
    return text.split(f"----- {name} Start -----\n", 1)[1].split(f"\n----- {name} End -----", 1)[0]


@policy("test-hgm-improve")
def improving(messages: Sequence[Message], params: GenParams) -> str:
    """Diagnoses a failure by its family's rule and adds that rule to the harness."""
    text = messages[-1].content
    if DIAGNOSE in text:
        task = _between(text, "Task").strip()
        rule = RULES[family_of(task)] if task.endswith("?") else "Check the arithmetic twice."
        return "```json\n" + json.dumps({"log_summarization": "added instead", "problem_description": rule}) + "\n```"
    if IMPROVE in text:
        problem = text.split(IMPROVE, 1)[1].split("\n\n", 1)[0].strip()
        return f"```\n{_between(text, 'Harness')}\n{problem}\n```"
    return arith_student(messages, params)


@policy("test-hgm-prose")
def prose(messages: Sequence[Message], params: GenParams) -> str:
    if DIAGNOSE in messages[-1].content:
        return "The assistant should be more careful."
    return arith_student(messages, params)


def run(tmp_path: Path, make_spec: Any, policy_name: str, **params: Any) -> tuple[RunStore, dict[str, Any]]:
    spec = make_spec(methods=[{"name": "hgm", "params": {"actions_per_step": 6, **params}}],
                     models={"s": {"backend": "scripted", "model": policy_name}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    tree = load_tree(store, store.cells()[0]["current_version"])
    state = read_tree(tree)
    assert state is not None and state_text(state) == tree[STATE]  # the file is the one JSON form of its model
    return store, {"tree": tree, "state": state.model_dump()}


def steps(store: RunStore) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind='hgm_step'"
                                                           " ORDER BY id")]


def test_the_tree_grows_by_hgms_rule_from_evaluated_nodes(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-hgm-improve")
    state, nodes = got["state"], {n["id"]: n for n in got["state"]["nodes"]}
    assert len(nodes) > 2 and all(n["parent"] in nodes for n in nodes.values() if n["id"] != "n0")
    n_evals, size = 0, 1
    for step in steps(store):
        pending = 0
        for plan in step["plans"]:
            if plan["kind"] == "expand":
                assert expand_now(n_evals, size, pending)  # an expansion only when the rule says so
                pending += 1
        size, n_evals = step["nodes"], step["n_evals"]
    first = steps(store)[0]["plans"]
    assert first[0]["kind"] == "eval" and first[0]["node"] == "n0"  # the root is measured before it is expanded
    # own results are each node's own: together they are every evaluation, none counted twice through a clade
    assert sum(len(n["results"]) for n in nodes.values()) == state["n_evals"]
    rollouts = store.query("SELECT COUNT(*) AS n FROM attempts WHERE phase='rollout'")[0]["n"]
    assert rollouts == state["n_evals"]
    live = max((n for n in nodes.values() if n["results"]), key=lambda n: posterior_mean(list(n["results"].values())))
    assert got["tree"]["system.md"] == live["system"]
    assert any(rule in live["system"] for rule in RULES.values())  # a diagnosed rule made it into the live harness


def test_prose_diagnoses_are_rejected_and_nothing_is_made(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-hgm-prose")
    rejected = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind="
                                                               "'rejected_output'")]
    assert rejected and all(r["what"] == "diagnosis" for r in rejected)
    assert [n["id"] for n in got["state"]["nodes"]] == ["n0"]
    assert STATE in got["tree"]
    assert '"problem"' not in got["tree"][STATE]  # the root was made from no diagnosis: the key is absent


def test_a_malformed_tree_is_one_line_naming_the_file() -> None:
    with pytest.raises(HarnessStateError, match=r"^'memory/hgm/tree\.json': not a valid Tree: nodes\.0\.id"):
        read_tree({STATE: '{"nodes": [{"parent": null, "system": ""}]}'})


def test_the_evaluation_budget_is_kept(tmp_path: Path, make_spec: Any) -> None:
    _, got = run(tmp_path, make_spec, "test-hgm-improve", max_task_evals=10)
    assert got["state"]["n_evals"] == 10


@pytest.mark.parametrize("params", [{"parent_policy": "mcts"}, {"actions_per_step": 0}])
def test_bad_params_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="methods.hgm.params"):
        build_method("hgm", params)


def test_every_node_is_a_version_of_the_runs_archive_with_its_results(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-hgm-improve")
    cell = store.cells()[0]["cell"]
    nodes = {n["id"]: n for n in got["state"]["nodes"]}
    rows = {r["id"]: json.loads(r["parent_ids"]) for r in store.query(
        "SELECT id, parent_ids FROM harness_versions WHERE cell=?", [cell])}
    init = store.unit_result(cell, "init")["version"]  # type: ignore[index]
    assert nodes["n0"]["version"] == init  # the root is the initial harness itself
    by_version: dict[str, list[dict[str, Any]]] = {}
    for node in nodes.values():  # two nodes with the same harness are one version (content-addressed)
        by_version.setdefault(node["version"], []).append(node)
    for version, same in by_version.items():
        first = same[0]
        assert version in rows
        if first["parent"] is not None:
            assert rows[version] == [nodes[first["parent"]]["version"]]
        graded = store.query("SELECT task_id, score FROM attempts WHERE cell=? AND phase='rollout' AND version_id=?",
                             [cell, version])
        union = {t: s for node in same for t, s in node["results"].items()}
        assert {r["task_id"]: r["score"] for r in graded} == union  # the archive's result matrix


@pytest.mark.parametrize("policy", ["dgm", "ucb"])
def test_other_lineage_policies_drive_the_same_loop(tmp_path: Path, make_spec: Any, policy: str) -> None:
    _, got = run(tmp_path, make_spec, "test-hgm-improve", parent_policy=policy, max_task_evals=30)
    nodes = got["state"]["nodes"]
    assert 0 < got["state"]["n_evals"] <= 30 and len(nodes) > 1
