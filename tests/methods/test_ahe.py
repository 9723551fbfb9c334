"""AHE's round with scripted models (evidence: mechanism): k rollouts per task in one batch, the last manifest scored
on the next round (a good change EFFECTIVE and kept, a harmful one HARMFUL and its file rolled back), one candidate
version per change, edits outside the editable components refused, a malformed manifest rejected with no change."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import TaskView, policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.ahe import Ahe
from evoarena.methods.ahe.components import STATE, component_tree, read_state
from evoarena.methods.ahe.reply import parse_reply
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore

EVOLVE = "You are the evolve agent"
HARM = "When someone gets more, answer with the starting amount only."
N_TRAIN, K = 6, 2


def _failures(prompt: str) -> dict[str, str]:
    """Failed task id -> family, read from the evolve prompt's per-task detail."""
    return {m.group(1): family_of(m.group(2)) for m in re.finditer(r"^### (\S+)\nTask: (.+)$", prompt, flags=re.M)}


def _reply(changes: list[dict[str, Any]], files: dict[str, str]) -> str:
    return "```json\n" + json.dumps({"changes": changes, "files": files}) + "\n```"


def _change(cid: str, path: str, fixes: Sequence[str], risks: Sequence[str] = ()) -> dict[str, Any]:
    return {"id": cid, "type": "new", "description": f"{cid} edits {path}", "files": [path],
            "failure_pattern": "wrong operation", "predicted_fixes": list(fixes), "risk_tasks": list(risks),
            "why_this_component": "test"}


@policy("test-ahe-student")
def student(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, but a harness holding HARM answers 'gets more' problems with the starting amount."""
    text = "\n\n".join(m.content for m in messages)
    question = re.findall(r"^Q: (.+)$", text, flags=re.M)
    if HARM in text and question and family_of(question[-1]) == "add":
        start = re.findall(r"\d+", question[-1])[0]
        return f" {start}"
    return arith_student(messages, params)


@policy("test-ahe-good")
def good(messages: Sequence[Message], params: GenParams) -> str:
    """Round 1: the rules of the failed families into memory (chg-1) and the counting rule as a skill (chg-2)."""
    prompt = messages[-1].content
    if "## Overview of round 1\n" not in prompt:
        return _reply([], {})
    failed = _failures(prompt)
    memo = {t: f for t, f in failed.items() if f != "count"}
    counts = [t for t, f in failed.items() if f == "count"]
    memory = "".join(f"- {RULES[f]}\n" for f in sorted(set(memo.values())))
    return _reply([_change("chg-1", "memory/long_term.md", sorted(memo)), _change("chg-2", "skills/count.md", counts)],
                  {"memory/long_term.md": memory, "skills/count.md": RULES["count"] + "\n"})


@policy("test-ahe-harm")
def harm(messages: Sequence[Message], params: GenParams) -> str:
    """Round 1: the multiplication rule into memory (chg-1) and a middleware rule that breaks the passing 'add'
    tasks, declared as its risk (chg-2)."""
    prompt = messages[-1].content
    if "## Overview of round 1\n" not in prompt:
        return _reply([], {})
    mul = sorted(t for t, f in _failures(prompt).items() if f == "mul")
    adds = sorted(re.findall(r"^- (\S+): pass$", prompt, flags=re.M))
    return _reply([_change("chg-1", "memory/long_term.md", mul), _change("chg-2", "middleware.md", [], adds)],
                  {"memory/long_term.md": f"- {RULES['mul']}\n", "middleware.md": HARM + "\n"})


@policy("test-ahe-prose")
def prose(messages: Sequence[Message], params: GenParams) -> str:
    return "I would add a rule about subtraction to the memory."


def run(tmp_path: Path, make_spec: Any, evolver: str, **params: Any) -> tuple[RunStore, dict[str, Any]]:
    spec = make_spec(methods=[{"name": "ahe", "params": params}],
                     models={"s": {"backend": "scripted", "model": "test-ahe-student"},
                             "e": {"backend": "scripted", "model": evolver}},
                     roles={"solver": "s", "evolver": "e"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    cell = store.cells()[0]
    tree = load_tree(store, cell["current_version"])
    state = read_state(tree)
    assert state is not None and state_text(state) == tree[STATE]  # the file is the one JSON form of its model
    return store, {"cell": cell["cell"], "tree": tree, "state": state.model_dump(mode="json")}


def events(store: RunStore, kind: str) -> list[dict[str, Any]]:
    return [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE kind=? ORDER BY id",
                                                           [kind])]


def candidates(store: RunStore, cell: str) -> dict[str, tuple[str, list[str]]]:
    """intent -> (version id, parents) of the versions AHE kept as candidates (not the runner's step versions)."""
    rows = store.query("SELECT id, parent_ids, manifest FROM harness_versions WHERE cell=?", [cell])
    return {json.loads(r["manifest"])["intent"]: (r["id"], json.loads(r["parent_ids"])) for r in rows
            if json.loads(r["manifest"])["intent"].startswith(("AHE chg", "AHE rollback"))}


def test_a_good_change_is_scored_effective_and_kept(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-good")
    rounds = events(store, "ahe_round")
    assert len(rounds) == N_TRAIN - 1  # one round per step; the first has no manifest to score
    first = rounds[0]
    assert first["verdicts"] == {"chg-1": "EFFECTIVE", "chg-2": "EFFECTIVE"}
    assert first["fix_precision"] == 1.0 and first["fix_recall"] == 1.0 and first["rolled_back"] == []
    assert set(first["outcomes"].values()) == {"pass"}
    tree = got["tree"]
    assert RULES["mul"] in tree["memory/long_term.md"] and tree["skills/count.md"].startswith(RULES["count"])
    shown = Ahe().context(tree, TaskView("t", "train", "t", "x"))
    assert RULES["count"] in shown and RULES["sub"] in shown and "round" not in shown  # components, not the state
    assert got["state"]["pooled_pr"]["fix"] == [1.0, 1.0]
    assert "pooled fix P/R 1.00/1.00" in json.loads(store.query(
        "SELECT manifest FROM harness_versions WHERE id=?", [store.cells()[0]["current_version"]])[0]["manifest"])[
        "evidence"]


def test_k_rollouts_per_task_in_each_round_on_the_live_candidate(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-good", rollouts=3, max_tasks=4, max_rounds=2)
    rows = store.query("SELECT task_id, version_id FROM attempts WHERE cell=? AND phase='rollout'", [got["cell"]])
    per: dict[tuple[str, str], int] = {}
    for r in rows:
        per[(r["version_id"], r["task_id"])] = per.get((r["version_id"], r["task_id"]), 0) + 1
    assert len(rows) == 2 * 4 * 3 and set(per.values()) == {3}
    init = store.unit_result(got["cell"], "init")["version"]  # type: ignore[index]
    chg2 = candidates(store, got["cell"])["AHE chg-2 (new): chg-2 edits skills/count.md"][0]
    assert {v for v, _ in per} == {init, chg2}  # round 1 on the seed harness, round 2 on the last change's version
    assert got["state"]["round"] == 2


def test_one_candidate_version_per_change_chained_by_parents(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-good", max_rounds=1)
    kept = candidates(store, got["cell"])
    init = store.unit_result(got["cell"], "init")["version"]  # type: ignore[index]
    chg1 = kept["AHE chg-1 (new): chg-1 edits memory/long_term.md"]
    chg2 = kept["AHE chg-2 (new): chg-2 edits skills/count.md"]
    assert chg1[1] == [init] and chg2[1] == [chg1[0]]
    assert component_tree(load_tree(store, chg2[0])) == component_tree(got["tree"])  # the last change is live
    assert STATE not in load_tree(store, chg1[0]) and "skills/count.md" not in load_tree(store, chg1[0])


def test_a_harmful_change_is_scored_harmful_and_its_file_rolled_back(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-harm", max_rounds=3)
    second, third = events(store, "ahe_round")
    assert second["verdicts"] == {"chg-1": "EFFECTIVE", "chg-2": "HARMFUL"}
    assert second["evaluation"]["regressed"] == ["train-000"] and second["regression_precision"] == 1.0
    assert second["rolled_back"] == ["middleware.md"]
    assert "middleware.md" not in got["tree"] and got["tree"]["memory/long_term.md"] == f"- {RULES['mul']}\n"
    assert third["evaluation"]["flipped"] == ["train-000"]  # the rollback restored the broken task
    kept = candidates(store, got["cell"])
    chg1, chg2 = (kept[f"AHE {c}"][0] for c in ("chg-1 (new): chg-1 edits memory/long_term.md",
                                                  "chg-2 (new): chg-2 edits middleware.md"))
    # the rollback's tree is chg-1's again: the same content address, so round 3 ran on chg-1's version
    assert got["state"]["live"] == chg1
    rows = store.query("SELECT DISTINCT version_id FROM attempts WHERE cell=? AND phase='rollout'", [got["cell"]])
    init = store.unit_result(got["cell"], "init")["version"]  # type: ignore[index]
    assert {r["version_id"] for r in rows} == {init, chg2, chg1}


@pytest.mark.parametrize(("components", "adopted"), [(["memory-only"], {"memory/long_term.md"}),
                                                     (["prompt"], set())])
def test_edits_outside_the_editable_components_are_refused(tmp_path: Path, make_spec: Any, components: list[str],
                                                           adopted: set[str]) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-good", components=components, max_rounds=2)
    assert {p for p in ("memory/long_term.md", "skills/count.md") if p in got["tree"]} == adopted
    refused = [r for r in events(store, "rejected_output") if r["what"] == "change"]
    assert refused and all("outside the editable components" in r["reason"] for r in refused)
    assert len(refused) == 2 - len(adopted)


def test_a_malformed_manifest_is_rejected_and_nothing_changes(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-prose", max_rounds=2)
    rejected = events(store, "rejected_output")
    assert len(rejected) == 2 and all(r["what"] == "manifest" for r in rejected)
    init = load_tree(store, store.unit_result(got["cell"], "init")["version"])  # type: ignore[index]
    assert component_tree(got["tree"]) == init
    assert candidates(store, got["cell"]) == {}
    assert got["state"]["manifest"]["changes"] == []


def test_reply_rules() -> None:
    current = {"system.md": "S", "middleware.md": "bad"}
    ok = parse_reply(_reply([{"id": "r", "type": "rollback", "files": ["middleware.md"]},
                             {"id": "n", "type": "new", "files": ["tools.md"]},
                             {"id": "same", "type": "improvement", "files": ["system.md"]}], {"system.md": "S"}),
                     components=("system.md", "middleware.md", "tools.md"), current=current,
                     snapshot={"system.md": "S"}, iteration=2)
    assert [c.id for c in ok.manifest.changes] == ["r"] and ok.edits == ({"middleware.md": None},)  # removed again
    assert [why.split(":")[0] for _, why in ok.refused] == ["change 'n'", "change 'same' leaves system.md as they are"]


@pytest.mark.parametrize("params", [{"components": ["memroy"]}, {"rollouts": 0}, {"rollback_verdicts": ["BAD"]}])
def test_bad_params_are_refused(params: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="methods.ahe.params"):
        build_method("ahe", params)


def test_the_report_shows_each_rounds_change_evaluation(tmp_path: Path, make_spec: Any) -> None:
    store, got = run(tmp_path, make_spec, "test-ahe-harm", max_rounds=3)
    results = json.loads((tmp_path / "run" / "results.json").read_text("utf-8"))
    view = results["views"]["ahe"]["cells"][0]
    assert view["cell"] == got["cell"] and [r["round"] for r in view["rounds"]] == [2, 3]
    assert view["rounds"][0]["verdicts"] == {"EFFECTIVE": 1, "HARMFUL": 1}
    assert view["rounds"][0]["rolled_back"] == ["middleware.md"] and view["rounds"][0]["regressed"] == 1
    assert view["pooled"]["regression precision"] == 1.0
    html = (tmp_path / "run" / "report.html").read_text("utf-8")
    assert "AHE: did the manifests predict what changed?" in html and "rolled back: middleware.md" in html
