"""Native `textgrad` under the cell (evidence: mechanism, the scripted `arith-student`, which plays textgrad's
critique and update prompts): the example's revert rule and defaults, the backward pass's request count and order,
the two-node pipeline's `update: final | both`, the direct-rewrite baseline, the right→wrong count of a reverted
candidate, and a bad param refused in one line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.api.params import ParamError
from evoarena.harness import load_tree
from evoarena.methods.textgrad.method import PLAN, PLAN_ROLE, PLAN_SEED, TextGrad, keeps, read_state, right_to_wrong
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore, queries

BENCH = {"seed": 0, "n_train": 6, "n_val": 4, "n_test": 6, "families": ["count", "add"]}
BACKWARD = "You are the gradient (feedback) engine."
UPDATE = "Here is the role of the variable you will improve"


def run(tmp_path: Path, make_spec: Any, model: str = "arith-student", **params: Any) -> RunStore:
    spec = make_spec(methods=[{"name": "textgrad", "params": params}], benchmark={"name": "arith", "params": BENCH},
                     models={"s": {"backend": "scripted", "model": model}}, roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run")
    return RunStore(tmp_path / "run")


def tree_of(store: RunStore) -> dict[str, str]:
    return dict(load_tree(store, store.cells()[0]["current_version"]))


def proposer_requests(store: RunStore) -> list[tuple[str, str]]:
    calls = [c for c in queries.calls(store) if c.role == "proposer" and c.phase == "practice" and c.request_blob]
    return [(m[0].content, m[-1].content) for m in (store.get_request(c.request_blob) for c in calls)]


def steps(store: RunStore) -> list[dict[str, Any]]:
    rows = store.query("SELECT payload FROM events WHERE kind='textgrad_native_step'")
    return [json.loads(r["payload"]) for r in rows]


def view(tmp_path: Path) -> dict[str, Any]:
    (row,) = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["textgrad_native"]["cells"]
    return dict(row)


def test_revert_rule_and_defaults_are_the_examples() -> None:
    """prompt_optimization.py: `if val_performance < previous_performance:` revert (a tie keeps); `--batch_size 3`,
    3 epochs x 4 steps = 12 updates, `--run_validation`. Mutation tried: `<=` in `keeps` fails the tie."""
    assert keeps(0.5, 0.5) and keeps(0.75, 0.5) and not keeps(0.25, 0.5)
    p = TextGrad.Params()
    assert (p.batch_size, p.updates, p.run_validation, p.pipeline, p.update, p.feedback) == (
        3, 12, True, "single", "final", "backprop")


def test_right_to_wrong_counts_only_items_both_graded() -> None:
    assert right_to_wrong({"a": True, "b": True, "c": False}, {"a": False, "b": True, "c": True, "d": False}) == (
        1, 1, 3)


def test_a_bad_param_is_refused_in_one_line() -> None:
    with pytest.raises(ParamError) as err:
        TextGrad.check_params({"pipeline": "three_node"})
    assert "\n" not in str(err.value) and "pipeline" in str(err.value)


def test_single_node_step_sends_two_critiques_per_example_then_one_update(tmp_path: Path, make_spec: Any) -> None:
    """One update: per example the loss's critique of the answer, then the answer's critique of the prompt carrying
    the first as its objective (2 x batch requests, all under BACKWARD_SYSTEM_PROMPT), then one TGD update; the rule
    the critiques named lands in system.md and val decides. Mutation tried: dropping the response gradient from the
    chain template (`response_gradient=""`) leaves the prompt critique without the rule and fails the assertion on
    system.md."""
    store = run(tmp_path, make_spec, updates=1)
    sent = proposer_requests(store)
    assert len(sent) == 2 * 3 + 1
    assert all(BACKWARD in s for s, _ in sent[:6]) and UPDATE in sent[6][1]
    assert all("<OUTPUT_OF_FUNCTION>" in u for _, u in sent[:3])
    assert all("following feedback on the LM_OUTPUT:" in u for _, u in sent[3:6])
    assert RULES["count"] in tree_of(store)["system.md"]
    (step,) = steps(store)
    assert step["kept"] and step["val"] >= step["previous"] and step["graded"] == BENCH["n_val"]
    state = read_state(tree_of(store))
    assert state is not None and state.done and state.updates == 1
    assert {c.role for c in queries.calls(store) if c.phase != "probe"} == {"solver", "proposer"}


def test_two_node_final_updates_only_the_answer_prompt(tmp_path: Path, make_spec: Any) -> None:
    """`update: final`: the plan is shown to the solver but gets no critique and no update."""
    store = run(tmp_path, make_spec, updates=1, pipeline="two_node", update="final")
    sent = proposer_requests(store)
    assert len(sent) == 2 * 3 + 1 and not any(f"<ROLE> {PLAN_ROLE} </ROLE>" in u for _, u in sent)
    tree = tree_of(store)
    assert tree[PLAN].strip() == PLAN_SEED and RULES["count"] in tree["system.md"]
    solver = [c for c in queries.calls(store) if c.role == "solver" and c.request_blob][0]
    assert f"Plan:\n{PLAN_SEED}" in store.get_request(solver.request_blob)[-1].content


def test_two_node_both_sends_the_plan_its_own_critique_and_update(tmp_path: Path, make_spec: Any) -> None:
    """`update: both`: the answer's critique goes to each predecessor that requires a gradient (prompt and plan: 3
    per example), then one TGD update per variable. Mutation tried: `requires_grad=True` for the plan under `final`
    fails the previous test."""
    store = run(tmp_path, make_spec, updates=1, pipeline="two_node", update="both")
    sent = proposer_requests(store)
    assert len(sent) == 3 * 3 + 2
    plan_critiques = [u for _, u in sent[:9] if f"<ROLE> {PLAN_ROLE} </ROLE>" in u]
    assert len(plan_critiques) == 3 and all("following feedback on the LM_OUTPUT:" in u for u in plan_critiques)
    assert tree_of(store)[PLAN].strip() != PLAN_SEED
    assert steps(store)[0]["files"] == [PLAN, "system.md"]


def test_direct_rewrite_sends_no_critique_only_the_errors(tmp_path: Path, make_spec: Any) -> None:
    """`feedback: errors`: no backward request; the one update request shows the failed conversations with the
    grader's message as their feedback."""
    store = run(tmp_path, make_spec, updates=1, feedback="errors")
    sent = proposer_requests(store)
    assert len(sent) == 1 and UPDATE in sent[0][1] and not any(BACKWARD in s for s, _ in sent)
    assert "<FEEDBACK>" in sent[0][1] and RULES["count"] in tree_of(store)["system.md"]


BROKEN = "Always reply 0."


@policy("test-textgrad-native-breaker")
def breaker(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, except that its TGD update proposes a prompt under which the solver answers 0."""
    if messages and BROKEN in messages[0].content:
        return "0"
    if UPDATE in messages[-1].content:
        return f"<IMPROVED_VARIABLE>{BROKEN}</IMPROVED_VARIABLE>"
    return arith_student(messages, params)


def test_a_worse_candidate_is_reverted_and_its_right_to_wrong_counted(tmp_path: Path, make_spec: Any) -> None:
    """A candidate under which every val item fails: reverted (val below the kept prompt's), system.md unchanged,
    and the val items right under the parent (the `add` ones) counted right→wrong in the event and the view.
    Mutation tried: `keeps` returning True fails `kept`; swapping parent and child in `right_to_wrong` fails the
    count."""
    store = run(tmp_path, make_spec, model="test-textgrad-native-breaker", updates=2)
    assert BROKEN not in tree_of(store)["system.md"]
    events = steps(store)
    assert [e["kept"] for e in events] == [False, False]
    assert all(e["right_to_wrong"] >= 1 and e["wrong_to_right"] == 0 and e["val"] == 0.0 for e in events)
    row = view(tmp_path)
    assert (row["steps"], row["kept"], row["reverted"]) == (2, 0, 2)
    assert row["right_to_wrong"] == sum(e["right_to_wrong"] for e in events) and row["rate"] > 0
    assert 'id="textgrad-native-steps"' in (tmp_path / "run" / "report.html").read_text()


@policy("test-textgrad-native-noisy")
def noisy(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, except that sample 0 of a call (the run's seed, 0) answers 999: the other samples outvote it."""
    return "999" if params.seed == 0 and "Q:" in messages[-1].content else arith_student(messages, params)


def test_vote_baseline_grades_the_majority_of_k_samples_on_val(tmp_path: Path, make_spec: Any) -> None:
    """`vote_k: 3`: no critique, no update; k samples per val item, the majority answer graded (a lone 999 is outvoted);
    the view shows the vote and, for every cell, the token-matched k. Mutation tried: grading the first sample
    instead of the majority's fails `val_vote > 0`."""
    store = run(tmp_path, make_spec, model="test-textgrad-native-noisy", vote_k=3)
    assert not proposer_requests(store)
    (vote,) = [json.loads(r["payload"]) for r in store.query("SELECT payload FROM events WHERE "
                                                              "kind='textgrad_native_vote'")]
    assert vote["k"] == 3 and vote["val_single"] == 0.0 and vote["val_vote"] > 0
    rows = store.query("SELECT count(*) AS n FROM attempts WHERE phase='rollout'")
    assert rows[0]["n"] == 3 * BENCH["n_val"]
    row = view(tmp_path)
    assert row["vote"]["k"] == 3 and row["matched_k"] is not None and row["matched_k"] >= 1


@policy("test-textgrad-native-untagged")
def untagged(messages: Sequence[Message], params: GenParams) -> str:
    """arith-student, except that its TGD update names the new prompt without the tags."""
    return arith_student(messages, params).replace("<IMPROVED_VARIABLE>", "New prompt: ").replace(
        "</IMPROVED_VARIABLE>", "")


def test_an_update_without_the_tags_is_rejected_and_the_prompt_stays(tmp_path: Path, make_spec: Any) -> None:
    """TextualGradientDescent.step raises IndexError without the opening tag; here the reply is a rejected
    `instruction`, the prompt stays and the view counts it."""
    store = run(tmp_path, make_spec, model="test-textgrad-native-untagged", updates=2)
    rejected = [e.payload for e in queries.events(store, ["rejected_output"])]
    assert len(rejected) == 2 and all("New prompt: " in str(r) for r in rejected)
    assert RULES["count"] not in tree_of(store)["system.md"] and not steps(store)
    row = view(tmp_path)
    assert (row["steps"], row["rejected"], row["kept"]) == (2, 2, 0)


def test_the_proposer_probe_is_tgds_update_read_as_step_reads_it() -> None:
    """One probe: TGD's update request over the generic examples (each a critique in its conversation); a tagged new
    prompt is usable, a reply without tags malformed, the probe's own prompt between the tags unusable."""
    from evoarena.api import GENERIC_EXAMPLES, Reply
    from evoarena.methods.textgrad.method import PROBE_PROMPT

    (probe,) = TextGrad().probes(GENERIC_EXAMPLES)
    assert probe.role == "proposer" and UPDATE in probe.prompt
    assert all(f"<FEEDBACK>{ex.feedback}</FEEDBACK>" in probe.prompt for ex in GENERIC_EXAMPLES)
    verdicts = [probe.judge(Reply(text, "stop")) for text in (
        "<IMPROVED_VARIABLE>Subtract what is given away.</IMPROVED_VARIABLE>", "Subtract what is given away.",
        f"<IMPROVED_VARIABLE>{PROBE_PROMPT}</IMPROVED_VARIABLE>")]
    assert [(v.well_formed, v.usable) for v in verdicts] == [(True, True), (False, False), (True, False)]


def test_random_prompt_baseline_sends_one_update_with_no_context_and_no_batch(tmp_path: Path, make_spec: Any
                                                                             ) -> None:
    """`feedback: none`: no batch rollout, no critique; one TGD request whose context is empty, then validation."""
    store = run(tmp_path, make_spec, updates=2, feedback="none")
    sent = proposer_requests(store)
    assert len(sent) == 2 and all("<CONTEXT></CONTEXT>" in u and UPDATE in u for _, u in sent)
    rollouts = store.query("SELECT count(*) AS n FROM attempts WHERE phase='rollout'")[0]["n"]
    assert rollouts == BENCH["n_val"] * 3  # the seed prompt's val, then each candidate's: no train batch
    assert len(steps(store)) == 2
