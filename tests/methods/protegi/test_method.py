"""ProTeGi on the binary `labels` task with scripted models (evidence: mechanism): the seed's constants per round
(2 critiques per beam prompt, 1 rewrite per critique, as many paraphrases, beam 2, 3 rounds), the bandit's budget,
paraphrases made of rewrites, the equal-budget paraphrase arm without critiques, the final pick on val (never a
test task in any rollout), and label flips counted."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evoarena.api import policy
from evoarena.harness import load_tree
from evoarena.methods.protegi.state import STATE, State
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.protegi_roles import EDITOR, protegi_labels
from evoarena.store import RunStore, queries

SMALL = {"seed": 0, "labels": 2, "n_train": 16, "n_val": 8, "n_test": 10}
BANDIT = {"minibatch_size": 16, "eval_rounds": 3, "prompts_per_round": 3, "samples_per_eval": 4}


@policy("test-protegi-flipper")
def flipper(messages: Sequence[Message], params: GenParams) -> str:
    """`protegi-labels`, but its rewrites swap the two labels' names everywhere in the prompt they return."""
    text = protegi_labels(messages, params)
    if EDITOR not in messages[-1].content:
        return text
    return re.sub(r"Billing|Shipping", lambda m: "Shipping" if m.group(0) == "Billing" else "Billing", text)


def run(tmp_path: Path, make_spec: Any, policy_name: str = "protegi-labels",
        **params: Any) -> tuple[RunStore, dict[str, list[dict[str, Any]]]]:
    spec = make_spec(benchmark={"name": "labels", "params": SMALL},
                     methods=[{"name": "protegi", "params": {**BANDIT, **params}}],
                     models={"s": {"backend": "scripted", "model": policy_name}},
                     roles={"solver": "s", "optimizer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    kinds = ["protegi_round", "protegi_final", "protegi_labels", "protegi_errors"]
    got: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    for e in queries.events(store, kinds):
        got[e.kind].append(e.payload)
    return store, got


def test_a_round_is_critiques_rewrites_paraphrases_then_the_bandit(tmp_path: Path, make_spec: Any) -> None:
    store, ev = run(tmp_path, make_spec)
    assert ev["protegi_labels"] == [{"labels": ["Billing", "Shipping"]}]
    rounds = ev["protegi_round"]
    assert [r["round"] for r in rounds] == [1, 2, 3]  # 3 rounds, then the steps do nothing
    beam: list[str] = ["p0"]
    for r in rounds:
        cands = {c["id"]: c for c in r["candidates"]}
        new = [c for c in r["candidates"] if c["new"]]
        rewrites = [c for c in new if c["kind"] == "rewrite"]
        paraphrases = [c for c in new if c["kind"] == "paraphrase"]
        assert [c["id"] for c in r["candidates"] if not c["new"]] == beam  # the beam is scored again with the new
        assert all(c["parent"] in beam for c in rewrites)
        for b in beam:  # 2 critiques → at most 2 rewrites per beam prompt (fewer: a duplicate is turned away)
            assert sum(c["parent"] == b for c in rewrites) <= 2
        assert all(cands[c["parent"]]["kind"] == "rewrite" for c in paraphrases)  # paraphrases of rewrites
        assert len(paraphrases) <= len(rewrites)
        queries_spent = sum(c["queries"] for c in r["candidates"])
        assert queries_spent == 3 * min(3, len(cands)) * 4  # eval_rounds x prompts chosen x samples
        assert len(r["beam"]) == min(2, len(cands))
        means = sorted((c["score"] for c in r["candidates"]), reverse=True)
        assert [cands[i]["score"] for i in r["beam"]] == means[: len(r["beam"])]  # the best bandit means kept
        beam = r["beam"]
    assert any(c["kind"] == "rewrite" and c["new"] for c in rounds[0]["candidates"])


def test_the_final_prompt_is_the_best_of_the_beam_on_val_and_test_is_never_rolled_out(
        tmp_path: Path, make_spec: Any) -> None:
    store, ev = run(tmp_path, make_spec)
    (final,) = ev["protegi_final"]
    assert [b["id"] for b in final["beam"]] == ev["protegi_round"][-1]["beam"] and final["val_tasks"] == 8
    best = max(final["beam"], key=lambda b: b["val"])["val"]
    assert next(b for b in final["beam"] if b["id"] == final["chosen"])["val"] == best
    cell = queries.cells(store)[0]
    assert cell.current_version is not None
    tree = load_tree(store, cell.current_version)
    state = State.model_validate_json(tree[STATE])
    assert tree["system.md"] == state.by_id(final["chosen"]).text
    phases = store.query("SELECT DISTINCT a.phase FROM attempts a JOIN tasks t ON t.task_id = a.task_id"
                         " WHERE t.split = 'test'")
    assert {r["phase"] for r in phases} == {"test"}
    on_val = store.query("SELECT COUNT(*) AS n FROM attempts a JOIN tasks t ON t.task_id = a.task_id"
                         " WHERE t.split = 'val' AND a.phase = 'rollout'")[0]["n"]
    assert on_val == len(final["beam"]) * 8  # the final beam, each on the whole val split, by the method
    assert "Billing:" in tree["system.md"] or "Shipping:" in tree["system.md"]  # the critiques' rule reached it


def test_the_paraphrase_arm_asks_no_critique_and_as_many_candidates(tmp_path: Path, make_spec: Any) -> None:
    store, ev = run(tmp_path, make_spec, expansion="paraphrase")
    assert ev["protegi_errors"] == []  # no minibatch of errors is looked for, no critique asked
    calls = [c for c in queries.calls(store, errors=False) if c.role == "optimizer" and c.phase != "probe"]
    # per beam prompt: 2 critiques x 1 reason x 1 rewrite x (1 + 1 paraphrase) = 4 paraphrase calls
    beams = [["p0"]] + [r["beam"] for r in ev["protegi_round"][:-1]]
    assert len(calls) == sum(4 * len(b) for b in beams)
    assert all(c["kind"] == "paraphrase" for r in ev["protegi_round"] for c in r["candidates"] if c["new"])
    assert all(c["parent"] in b for r, b in zip(ev["protegi_round"], beams, strict=True)
               for c in r["candidates"] if c["new"])


def test_label_flips_are_checked_and_counted(tmp_path: Path, make_spec: Any) -> None:
    store, ev = run(tmp_path, make_spec, "test-protegi-flipper")
    flagged = [c for r in ev["protegi_round"] for c in r["candidates"] if c["new"] and c["flip"]]
    assert flagged
    cell = queries.cells(store)[0]
    assert cell.current_version is not None
    state = State.model_validate_json(load_tree(store, cell.current_version)[STATE])
    for c in flagged:
        check = state.by_id(c["id"]).check
        assert check is not None and check.flipped
    clean = run(tmp_path / "clean", make_spec)[1]
    assert not any(c["flip"] for r in clean["protegi_round"] for c in r["candidates"])


def test_uniform_allocation_gives_every_candidate_its_turn(tmp_path: Path, make_spec: Any) -> None:
    _, ev = run(tmp_path, make_spec, allocation="uniform", eval_rounds=6, prompts_per_round=1)
    for r in ev["protegi_round"]:
        chosen = [i for b in r["bandit"] for i in b["chosen"]]
        k = len(r["candidates"])
        assert chosen == [t % k for t in range(6)]  # in turn, one per evaluation round
        counts = [c["queries"] for c in r["candidates"]]
        assert max(counts) - min(counts) <= 4  # shares differ by at most one turn of 4 samples
