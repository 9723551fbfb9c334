"""GEPA's merge (gepa 0.1.4 `proposer/merge.py`, `core/engine.py`): the rules on hand-made pools, and one merge end
to end on the scripted model (evidence: mechanism)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.arith.benchmark import ArithBenchmark
from evoarena.harness import load_tree
from evoarena.harness.state import state_text
from evoarena.methods.gepa import merge
from evoarena.methods.gepa.merge import MergeState
from evoarena.methods.gepa.method import Gepa
from evoarena.methods.gepa.pool import POOL, Candidate, Pool, read_pool
from evoarena.models import GenParams, Message
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import solve_correctly
from evoarena.store import RunStore

A, B, C = "seed text", "changed by one", "changed by the other"


def test_kept_component_takes_the_other_descendants_change() -> None:
    """merge.py lines 167-172: a component one descendant kept from the ancestor takes the other's text."""
    programs = [{"x": A, "y": A}, {"x": A, "y": B}, {"x": C, "y": A}]
    merged, sources = merge.combine(random.Random(0), programs, [0.1, 0.5, 0.5], 1, 2, 0)
    assert merged == {"x": C, "y": B} and sources == (2, 1)


def test_both_changed_takes_the_better_descendant_and_a_tie_draws() -> None:
    """merge.py lines 173-184: both changed -> the higher aggregate score's text; equal scores -> rng.choice."""
    programs = [{"x": A}, {"x": B}, {"x": C}]
    assert merge.combine(random.Random(0), programs, [0.0, 0.4, 0.6], 1, 2, 0)[0] == {"x": C}
    assert merge.combine(random.Random(0), programs, [0.0, 0.6, 0.4], 1, 2, 0)[0] == {"x": B}
    drawn = {merge.combine(random.Random(s), programs, [0.0, 0.5, 0.5], 1, 2, 0)[0]["x"] for s in range(20)}
    assert drawn == {B, C}


def test_desirable_needs_one_kept_and_one_changed_component() -> None:
    """merge.py lines 27-43 (`does_triplet_have_desirable_predictors`): with one component, both descendants
    changed it -> no merge; one kept it -> a merge."""
    assert not merge.desirable([{"x": A}, {"x": B}, {"x": C}], 0, 1, 2)
    assert merge.desirable([{"x": A}, {"x": A}, {"x": C}], 0, 1, 2)
    assert not merge.desirable([{"x": A}, {"x": B}, {"x": B}], 0, 1, 2)


def test_pair_refuses_lineage_better_ancestor_and_tried_triplets() -> None:
    """merge.py lines 59, 100, 56: one candidate the other's ancestor, an ancestor scoring above a descendant, or a
    triplet already tried -> no pair."""
    programs = [{"x": A}, {"x": A}, {"x": C}, {"x": C}]
    parents: list[list[int]] = [[], [0], [0], [2]]
    rng = random.Random(0)
    assert merge.find_pair(rng, parents, [1, 2], MergeState(), [0.2, 0.3, 0.3, 0.3], programs) == (1, 2, 0)
    assert merge.find_pair(rng, parents, [2, 3], MergeState(), [0.2, 0.3, 0.3, 0.3], programs) is None
    assert merge.find_pair(rng, parents, [1, 2], MergeState(), [0.4, 0.3, 0.5, 0.3], programs) is None
    assert merge.find_pair(rng, parents, [1, 2], MergeState(tried=[(1, 2, 0)]), [0.2, 0.3, 0.3, 0.3],
                           programs) is None


def test_attempt_records_and_never_rebuilds_a_merge() -> None:
    """merge.py lines 195-205 and 329: a built merge is recorded (triplet and description) and not built again."""
    programs = [{"x": A}, {"x": A}, {"x": C}]
    state = MergeState()
    args = (programs, [[], [0], [0]], [1, 2], [0.2, 0.3, 0.4], state, lambda i, j: True)
    assert merge.attempt(random.Random(0), *args) == ({"x": C}, (1, 2, 0))
    assert state.tried == [(1, 2, 0)] and state.built == [(1, 2, (2,))]
    assert merge.attempt(random.Random(0), *args) is None
    assert MergeState.model_validate_json(state.model_dump_json()) == state


def test_attempt_needs_three_programs_and_val_overlap() -> None:
    """merge.py lines 128-131 and 199: fewer than 3 programs, or parents sharing too few val ids -> None."""
    programs = [{"x": A}, {"x": A}, {"x": C}]
    assert merge.attempt(random.Random(0), programs[:2], [[], [0]], [0, 1], [0.1, 0.1], MergeState(),
                         lambda i, j: True) is None
    assert merge.attempt(random.Random(0), programs, [[], [0], [0]], [1, 2], [0.2, 0.3, 0.4], MergeState(),
                         lambda i, j: False) is None


def test_subsample_takes_two_from_each_stratum_then_fills() -> None:
    """merge.py lines 258-288: ⌈5/3⌉ = 2 ids where parent 1 wins, 2 where parent 2 wins, then ties / the rest."""
    s1 = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0, "e": 0.0, "f": 0.5, "g": 0.5}
    s2 = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 1.0, "e": 1.0, "f": 0.5, "g": 0.5}
    for seed in range(10):
        sub = merge.subsample(random.Random(seed), s1, s2)
        assert len(sub) == 5 == len(set(sub))
        assert sum(k in "abc" for k in sub[:2]) == 2 and set(sub[2:4]) == {"d", "e"} and sub[4] in "fg"
    assert merge.subsample(random.Random(0), {"a": 1.0}, {"a": 0.0, "b": 1.0}) == ["a"] * 5


def test_acceptance_is_at_least_the_better_parent() -> None:
    """engine.py line 791: `new_sum >= max(parent_sums)` — a tie with the better parent is accepted."""
    assert merge.accepts([1, 1, 1], [3, 2])
    assert not merge.accepts([1, 1, 0], [3, 2])


def test_a_merge_is_due_after_each_accept_until_the_cap() -> None:
    """engine.py lines 546-549: each accepted reflective child sets the flag and, while fewer than
    `max_merge_invocations` merges were accepted, one more merge becomes due."""
    state = MergeState(tested=1)
    merge.schedule_after_accept(state, 2)
    assert (state.due, state.last_found_new) == (1, True)
    state.tested = 2
    merge.schedule_after_accept(state, 2)
    assert state.due == 1


# --- one merge end to end ----------------------------------------------------------------------------------------

_TASKS = ArithBenchmark(seed=0, n_train=6, n_val=5, n_test=10).generate()
_VAL = [t for t in _TASKS if t.split == "val"]
_FIRST = {t.prompt for t in _VAL[:2]}
MARK = "I provided an assistant with the following instructions"


@policy("test-gepa-merge")
def merge_policy(messages: Sequence[Message], params: GenParams) -> str:
    """The proposer repeats its parent (never accepted); the solver answers the first two val questions right
    without `RULE-B` in its system prompt, every other one right with it."""
    text = messages[-1].content
    if MARK in text:
        return "```\n" + text.split("```", 2)[1].strip() + "\n```"
    system = messages[0].content if messages[0].role == "system" else ""
    question = re.findall(r"^Q: (.+)$", "\n".join(m.content for m in messages), flags=re.M)[-1]
    right = (question in _FIRST) != ("RULE-B" in system)
    return f" {solve_correctly(question) if right else -1}"


def test_merge_end_to_end(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool where c1 kept the seed's text and c2 changed it, a merge due (engine.py line 769): the first step
    merges c1 + c2 over ancestor c0 into c2's text, scores it on the 5 val ids (2 where c1 wins, 3 where c2 wins),
    accepts it on a tie with the better parent (3 >= max(2, 3)), adds it with both parents, counts it, and runs no
    reflective mutation in that step; the report view lists the merge."""
    initialize = Gepa.initialize

    def seeded(self: Gepa, ws: Any, system_prompt: str, solver_params: GenParams) -> None:
        initialize(self, ws, system_prompt, solver_params)
        cands = [Candidate(id="c0", parent=None, components={"system.md": system_prompt}, scores={}),
                 Candidate(id="c1", parent="c0", components={"system.md": system_prompt}, scores={}),
                 Candidate(id="c2", parent="c0", components={"system.md": system_prompt + "\nRULE-B"}, scores={})]
        ws.write(POOL, state_text(Pool(candidates=cands, merge=MergeState(due=1, last_found_new=True))))

    monkeypatch.setattr(Gepa, "initialize", seeded)
    spec = make_spec(methods=[{"name": "gepa", "params": {"use_merge": True}}],
                     models={"s": {"backend": "scripted", "model": "test-gepa-merge"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT kind, unit, payload FROM events WHERE kind LIKE 'gepa_%' ORDER BY id")
    merges = [json.loads(r["payload"]) for r in rows if r["kind"] == "gepa_merge"]
    assert merges[0] == {"merged": True, "parents": ["c1", "c2"], "ancestor": "c0",
                         "subsample": merges[0]["subsample"], "before": [2.0, 3.0],
                         "after": merges[0]["after"], "accepted": True}
    assert sorted(merges[0]["subsample"]) == sorted(t.id for t in _VAL) and sum(merges[0]["after"]) == 3
    first_step = rows[0]["unit"]
    assert rows[0]["kind"] == "gepa_merge" and first_step is not None
    assert not [r for r in rows if r["kind"] == "gepa_iteration" and r["unit"] == first_step]
    pool = read_pool(load_tree(store, store.cells()[0]["current_version"]))
    assert pool is not None and pool.merge is not None
    merged = pool.candidates[3]
    assert (merged.parent, merged.merge_parent, merged.components["system.md"].endswith("RULE-B")) == (
        "c1", "c2", True)
    assert (pool.merge.due, pool.merge.tested, pool.merge.tried) == (0, 1, [(1, 2, 0)])
    view = json.loads((tmp_path / "run" / "results.json").read_text())["views"]["gepa"]["cells"][0]
    assert view["merges"][0] == {"parents": ["c1", "c2"], "ancestor": "c0", "before": [2.0, 3.0], "after": 3.0,
                                 "accepted": True}
    assert view["merges_accepted"] == 1
    assert 'id="gepa-merges"' in (tmp_path / "run" / "report.html").read_text()
