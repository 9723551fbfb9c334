"""EvoTest against its seed and released code: UCB's bonus added to the raw game score (`score_scale: raw`) or to
the normalised one (`unit`), the seed's prompt-only arm and the paper's −UCB ablation (`selection: greedy`), and the
evolver's failure rate (the seed's failure rate of executable state extractors) counted from rejected output."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from evotest_runs import BAD_START, EVOLVER_PROMPTS, episodes, final_state, rejected, run

from evoarena.api import Attempt
from evoarena.methods.evotest import method as evotest_method
from evoarena.methods.evotest.reply import ReplyError, parse_reply
from evoarena.methods.evotest.report_view import failure_rates
from evoarena.methods.evotest.state import DEFAULT_EXTRACTOR, EXTRACTOR, GUIDE, Node, State, choose_parent

MAX = 350.0  # Zork 1's maximum, the released code's score scale


def small_tree() -> State:
    """n0 (150) → n1 (210) → n2 (60), n3 (30): raw game scores; the normalised ones are score / 350."""
    spec = [("n0", None, 150.0), ("n1", "n0", 210.0), ("n2", "n1", 60.0), ("n3", "n1", 30.0)]
    nodes: dict[str, Node] = {}
    for nid, parent, raw in spec:
        depth = 0 if parent is None else nodes[parent].depth + 1
        nodes[nid] = Node(id=nid, parent=parent, depth=depth, origin="evolved", config={}, scores=[raw / MAX],
                          raw_scores=[raw])
        if parent is not None:
            nodes[parent].children.append(nid)
    return State(nodes=list(nodes.values()), next="n0")


def released_ucb(score: float, depth: int, children: int, n: int, c: float = 1.0, alpha: float = 0.8) -> float:
    """yf-he/EvoTest @f92474c `calculate_ucb` (digest batch 2 §4 l.43): score + c·α^depth·sqrt(ln max(2, N) / (1 +
    children)), c = 1, α = 0.8, N = the number of nodes, the score the episode's raw game score."""
    return score + c * alpha**depth * math.sqrt(math.log(max(2, n)) / (1 + children))


def test_raw_adds_the_released_bonus_to_the_raw_score_and_unit_to_the_normalised_one() -> None:
    """The released formula (`calculate_ucb`, digest batch 2 l.43) on a four-node archive: `raw` is the raw game score
    plus the bonus, `unit` the score over the maximum plus the same bonus."""
    state = small_tree()
    shape = {"n0": (0, 1), "n1": (1, 2), "n2": (2, 0), "n3": (2, 0)}  # depth, children
    raws = {n.id: n.raw_scores[0] for n in state.nodes}
    _, raw = choose_parent(state, c=1.0, alpha=0.8, raw=True)
    _, unit = choose_parent(state, c=1.0, alpha=0.8, raw=False)
    assert raw == pytest.approx({k: released_ucb(raws[k], *shape[k], 4) for k in raws})
    assert unit == pytest.approx({k: released_ucb(raws[k] / MAX, *shape[k], 4) for k in raws})
    assert raw["n1"] == pytest.approx(210 + 0.8 * math.sqrt(math.log(4) / 3))  # ≈ 210.54: the bonus is < 1 point


def test_raw_picks_the_best_node_where_unit_explores() -> None:
    """Released (raw scores 0–350) the bonus (≤ ~1.2) barely moves the argmax: nearly greedy; on [0, 1] it exceeds
    the whole score range and UCB picks a lower-scoring, less-evolved node."""
    state = small_tree()
    assert choose_parent(state, c=1.0, alpha=0.8, raw=True)[0] == "n1"  # the best score
    assert choose_parent(state, c=1.0, alpha=0.8, raw=False)[0] == "n0"  # the root: fewer children, shallower
    rng, greedy = random.Random(0), {True: 0, False: 0}
    for _ in range(200):  # random ten-node trees with integer game scores 0–350
        nodes = [Node(id="n0", parent=None, depth=0, origin="root", config={})]
        for k in range(1, 10):
            parent = rng.choice(nodes)
            nodes.append(Node(id=f"n{k}", parent=parent.id, depth=parent.depth + 1, origin="evolved", config={}))
            parent.children.append(f"n{k}")
        for node in nodes:
            score = float(rng.randint(0, 350))
            node.raw_scores, node.scores = [score], [score / MAX]
        tree = State(nodes=nodes, next="n0")
        best = max(n.raw_scores[0] for n in nodes)
        for scale in (True, False):
            chosen = choose_parent(tree, c=1.0, alpha=0.8, raw=scale)[0]
            greedy[scale] += next(n for n in nodes if n.id == chosen).raw_scores[0] == best
    assert greedy[True] == 200  # raw: always a best-scoring node
    assert greedy[False] < 130  # unit: about half the time another node


def test_greedy_selection_is_the_best_score_on_either_scale() -> None:
    """The paper's −UCB ablation (Table 3, Detective 0.68 vs full 0.94; digest batch 2 l.46): no exploration bonus,
    the best-scoring node is evolved (the earliest among ties)."""
    state = small_tree()
    for raw in (True, False):
        chosen, ucb = choose_parent(state, c=0.0, alpha=0.8, raw=raw)
        assert chosen == "n1" and ucb["n1"] == pytest.approx(210.0 if raw else 0.6)


def test_the_raw_score_is_the_answers_game_score() -> None:
    """The episode answer's `score` (the game's own points), not the normalised feedback score."""
    answer = json.dumps({"score": 120, "max_score": 350, "won": False, "steps": 30, "stopped": "budget"})
    assert evotest_method._raw_score(Attempt(task_id="t", text="", answer=answer), 120 / 350) == 120.0
    assert evotest_method._raw_score(Attempt(task_id="t", text="", answer=None), 0.25) == 0.25  # no episode


@pytest.mark.parametrize("scale", ["raw", "unit"])
def test_the_scale_reaches_the_parent_choice(tmp_path: Path, make_spec: Any, monkeypatch: pytest.MonkeyPatch,
                                             scale: str) -> None:
    """`score_scale` decides which scores the UCB reads; every node records both."""
    seen: list[bool] = []

    def spy(state: State, **kw: Any) -> tuple[str, dict[str, float]]:
        seen.append(kw["raw"])
        return choose_parent(state, **kw)

    monkeypatch.setattr(evotest_method, "choose_parent", spy)
    store = run(tmp_path, make_spec, episodes=3, score_scale=scale)
    assert seen == [scale == "raw"] * 3
    state, _ = final_state(store)
    played = [n for n in state["nodes"] if n["scores"]]
    assert all(n["raw_scores"] == n["scores"] for n in played)  # the maze's maximum is 1
    assert [e["raw_score"] for e in episodes(store)] == [e["score"] for e in episodes(store)]


def test_the_default_is_the_released_scale() -> None:
    assert evotest_method.EvoTest.Params().score_scale == "raw"
    assert evotest_method.EvoTest.Params().selection == "ucb"


# -- the arms ----------------------------------------------------------------------------------------------------------
def test_prompt_only_evolves_the_guiding_prompt_alone(tmp_path: Path, make_spec: Any) -> None:
    """The seed's prompt-only arm (digest batch 2 l.45: arms Static, prompt-only, full + UCB): the evolver is not
    asked for an extractor and any code it sends is ignored; every child changes the guiding prompt only."""
    EVOLVER_PROMPTS.clear()
    store = run(tmp_path, make_spec, episodes=4, model="test-evotest-recording", mutate="prompt")
    state, tree = final_state(store)
    evolved = [n for n in state["nodes"] if n["origin"] == "evolved"]
    assert evolved and all(n["adopted"] == ["prompt"] for n in evolved)
    assert all(n["config"][EXTRACTOR] == DEFAULT_EXTRACTOR for n in state["nodes"])
    assert all(n["config"][GUIDE] != BAD_START + "\n" for n in evolved)
    assert EVOLVER_PROMPTS and all("<code>" not in p and "extract_state" not in p for p in EVOLVER_PROMPTS)
    assert tree[EXTRACTOR] == DEFAULT_EXTRACTOR
    with pytest.raises(ReplyError):  # code alone is nothing to keep in this scope
        parse_reply("<code>\ndef extract_state(h):\n    return 'x'\n</code>", "prompt")


def test_greedy_always_evolves_the_best_node(tmp_path: Path, make_spec: Any) -> None:
    """−UCB: with every episode lost (score 0) the best node is the root (the earliest among ties), so every child
    is the root's, where UCB spreads the search over the tree (test_evotest: the bonus moves it between nodes)."""
    store = run(tmp_path, make_spec, episodes=5, selection="greedy")
    eps = episodes(store)
    assert all(e["score"] == 0.0 for e in eps)
    assert [e["source"] for e in eps] == ["n0"] * 5
    assert all(set(e["ucb"].values()) == {0.0} for e in eps)  # no bonus


# -- the failure rate --------------------------------------------------------------------------------------------------
def test_a_malformed_reply_counts_as_an_evolver_and_extractor_failure(tmp_path: Path, make_spec: Any) -> None:
    """Every reply is unparsable (a 2-character prompt, code that does not compile): every episode's step rejected
    it, so both rates are 1, and the parts named are the ones the `rejected_output` events name."""
    store = run(tmp_path, make_spec, episodes=3, model="test-evotest-malformed")
    eps = episodes(store)
    assert [e["rejected"] for e in eps] == [["guiding prompt", "extract_state", "evolver reply"]] * 3
    assert failure_rates(eps) == {"failure_rate": 1.0, "extractor_failure_rate": 1.0}
    assert [r["what"] for r in rejected(store)] == ["evolver reply"] * 3  # one rejected reply per episode


def test_an_extractor_failing_its_smoke_run_counts_in_the_episode_it_played(tmp_path: Path, make_spec: Any) -> None:
    """The raising extractor is kept at compile time and fails its smoke run on the child's episode: the root's
    episode has no failure, the child's one extractor failure (its new prompt then wins, and the frozen tree
    replays it without evolving: no more failures)."""
    store = run(tmp_path, make_spec, episodes=3, model="test-evotest-raising")
    eps = episodes(store)
    assert [e["rejected"] for e in eps] == [[], ["extract_state"], []]
    assert failure_rates(eps) == pytest.approx({"failure_rate": 1 / 3, "extractor_failure_rate": 1 / 3})
    assert [r["what"] for r in rejected(store)] == ["extract_state"]  # the rate counts the rejected extractors


def test_the_failure_rates_are_shares_of_episodes() -> None:
    eps = [{"rejected": []}, {"rejected": ["guiding prompt"]}, {"rejected": ["extract_state"]}, {}]
    assert failure_rates(eps) == {"failure_rate": 0.5, "extractor_failure_rate": 0.25}
    assert failure_rates([]) == {"failure_rate": None, "extractor_failure_rate": None}
