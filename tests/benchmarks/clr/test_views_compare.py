"""The CLR comparison views (self -> lesson scatter, practice tokens, gates) against what the run store holds."""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.clr.compare_data import (
    Pair,
    event_chain,
    label_pairs,
    lesson_pairs,
    spec_conditions,
    unit_calls,
)
from evoarena.benchmarks.clr.compare_views import pair_rows, scatter_plot
from evoarena.models import GenParams, Message, ScriptedBackend
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.clr.student import clr_student
from evoarena.spec import parse_spec
from evoarena.store import RunStore

CHAINS = 2


def _spec() -> Any:
    return parse_spec({
        "name": "clr-compare",
        "benchmark": {"name": "clr", "params": {"chains": CHAINS, "layers": 2}},
        "methods": [
            {"name": "frozen"},
            {"name": "history"},
            {"name": "reflexion", "params": {"max_trials": 1}},
            {"name": "reflexion", "label": "reflexion-lesson",
             "params": {"max_trials": 1, "update_note": "clr:lesson"}},
            {"name": "tf_grpo"},
            {"name": "evoskill"},
        ],
        "models": {"s": {"backend": "scripted", "model": "clr-student", "max_retries": 0}},
        "roles": {"solver": "s", "reflector": "s"},
    })


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], RunStore]:
    run_dir = tmp_path_factory.mktemp("clr-compare") / "run"
    with pytest.MonkeyPatch.context() as mp:  # the autouse per-test cache does not reach a module fixture
        mp.setenv("EVOARENA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        results = run_experiment(_spec(), run_dir)
    return results, RunStore(run_dir)


def _cell(store: RunStore, condition: str) -> str:
    row = store.query_one("SELECT cell FROM cells WHERE condition=?", [condition])
    assert row is not None
    return str(row["cell"])


def test_pairs_come_from_the_spec_not_the_labels() -> None:
    spec = {
        "roles": {"solver": "a"},
        "methods": [
            {"name": "ace", "label": "plain"},
            {"name": "ace", "label": "taught", "params": {"update_note": "clr:lesson"}},
            {"name": "ace", "label": "named", "params": {"update_note": "clr:class-name"}},  # a reference, no lesson
            {"name": "ace", "label": "other-model-lesson", "params": {"update_note": "clr:lesson"},
             "roles": {"solver": "b"}},
            {"name": "gepa", "label": "gepa-self"},
            {"name": "gepa", "label": "gepa-lesson", "params": {"update_note": "clr:convention@L1", "x": 1}},
        ],
    }
    pairs = lesson_pairs(spec_conditions(spec))
    assert pairs == [Pair("plain", "taught", "clr:lesson", "spec")]  # gepa differs in a param, b in the model


def test_label_fallback() -> None:
    assert label_pairs(["ace-self", "ace-lesson", "dc", "dc-lesson", "gepa-lesson"]) == [
        Pair("ace-self", "ace-lesson", "(from the labels)", "labels"),
        Pair("dc", "dc-lesson", "(from the labels)", "labels"),
    ]


@dataclass(frozen=True)
class Call:
    """The fields of a ledger row (store.CallRow) that unit_calls reads, and its cache key."""

    unit: str
    cache_key: str
    input_tokens: int
    output_tokens: int


def test_unit_calls_skip_the_prefix_left_by_a_unit_cut_off_before_a_resume() -> None:
    # unit u1 made 2 calls; u2 was cut off after 1 call (k3), then redone: k3 (cached) and k4
    calls = [Call("u1", "k1", 10, 1), Call("u1", "k2", 20, 2), Call("u2", "k3", 30, 3), Call("u2", "k3", 30, 3),
             Call("u2", "k4", 40, 4)]
    units = [("u1", {"calls": 2, "tokens": 33}), ("u2", {"calls": 4, "tokens": 110})]
    by_unit, unattributed, aligned = unit_calls(units, calls, {"calls": 0, "tokens": 0})
    assert [c.cache_key for c in by_unit["u2"]] == ["k3", "k4"] and unattributed == 1 and aligned
    assert not unit_calls([("u1", {"calls": 2, "tokens": 34})], calls[:2], {})[2]  # the meter disagrees


def test_event_chain() -> None:
    assert event_chain({"task_id": "travel-0/L2/practice"}) == "travel-0"
    assert event_chain({"unit": "travel-1/L1/practice/a3"}) == "travel-1"
    assert event_chain({"child": "p2"}) is None


def test_scatter_draws_a_png_with_arrows() -> None:
    pc = {n: {"inc_u": {"rate": x}, "exc": {"rate": y}} for n, x, y in [("a", 0.1, 0.9), ("a-l", 0.5, 0.8)]}
    rows = pair_rows([Pair("a", "a-l", "clr:lesson", "spec")], pc)
    assert rows[0]["inc_u"]["delta"] == 0.4 and rows[0]["exc"]["delta"] == -0.1
    assert base64.b64decode(scatter_plot(pc, rows, "mechanism")).startswith(b"\x89PNG")


def test_an_arrow_exactly_for_the_self_lesson_pair(run: tuple[dict[str, Any], RunStore]) -> None:
    results, _ = run
    v = results["views"]["clr"]
    pairs = v["compare"]["pairs"]
    assert [(p["self"], p["lesson"], p["note"], p["source"]) for p in pairs] == [
        ("reflexion", "reflexion-lesson", "clr:lesson", "spec")
    ]
    for metric in ("inc_u", "exc"):
        assert pairs[0][metric]["self"] == v["conditions"]["reflexion"][metric]["rate"]
        assert pairs[0][metric]["lesson"] == v["conditions"]["reflexion-lesson"][metric]["rate"]


def test_tokens_equal_the_ledger_of_the_practice_units(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    tokens = results["views"]["clr"]["compare"]["tokens"]
    assert set(tokens) == {"frozen", "history", "reflexion", "reflexion-lesson", "tf_grpo", "evoskill"}
    for cond, t in tokens.items():
        assert t["chains"] == CHAINS and t["ledger_aligned"] and t["unattributed_calls"] == 0
        ledger = store.query_one(
            "SELECT SUM(input_tokens) AS i, SUM(output_tokens) AS o FROM calls WHERE cell=? AND phase='practice'",
            [_cell(store, cond)],
        )
        assert ledger is not None
        assert t["per_chain"]["input_tokens"] * CHAINS == ledger["i"]
        assert t["per_chain"]["output_tokens"] * CHAINS == ledger["o"]
        assert sum(layer["input_tokens"] for layer in t["layers"].values()) == t["per_chain"]["input_tokens"]
        assert t["per_chain"]["tokens"] == t["per_chain"]["input_tokens"] + t["per_chain"]["output_tokens"]
    assert tokens["frozen"]["per_chain"]["update_tokens"] == 0  # the solver only
    updates = store.query_one("SELECT SUM(input_tokens + output_tokens) AS n FROM calls WHERE cell=? AND role!='solver'"
                              " AND phase='practice'", [_cell(store, "reflexion")])
    assert updates is not None and tokens["reflexion"]["per_chain"]["update_tokens"] * CHAINS == updates["n"]


def _events(store: RunStore, condition: str) -> list[tuple[str, dict[str, Any]]]:
    rows = store.query("SELECT kind, payload FROM events WHERE cell=? ORDER BY id", [_cell(store, condition)])
    return [(r["kind"], json.loads(r["payload"])) for r in rows]


def test_gates_match_the_events(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    gates = results["views"]["clr"]["compare"]["gates"]
    assert gates["frozen"]["chains_without_state_change"] == CHAINS and gates["frozen"]["practice_layers_passed"] == 0
    assert gates["frozen"]["evoskill"] is None and gates["frozen"]["tf_grpo"] is None

    grpo, events = gates["tf_grpo"]["tf_grpo"], _events(store, "tf_grpo")
    unmixed = [p for k, p in events if k == "no_mixed_group"]
    practice_units = store.query("SELECT key FROM units WHERE cell=? AND key LIKE '%/practice/a%'",
                                 [_cell(store, "tf_grpo")])
    assert grpo["no_mixed_groups"] == len(unmixed) and grpo["groups"] == len(practice_units)
    assert grpo["no_mixed_all_failed"] + grpo["no_mixed_all_passed"] <= len(unmixed)
    groups = Counter(u["key"].split("/L")[0] for u in practice_units)
    per_chain = Counter(p["task_id"].split("/L")[0] for p in unmixed)
    assert grpo["chains_without_mixed_group"] == sum(per_chain[c] == n for c, n in groups.items())

    evo, events = gates["evoskill"]["evoskill"], _events(store, "evoskill")
    iterations = [p for k, p in events if k == "evoskill_iteration"]
    assert evo["iterations"] == len(iterations) == evo["iterations_in_states"]
    assert sum(evo["outcomes"].values()) == len(iterations)
    # each chain starts from a fresh state, so `evoskill_seed` opens each chain's stretch of events
    chains: list[list[str]] = []
    for kind, payload in events:
        if kind == "evoskill_seed":
            chains.append([])
        elif kind == "evoskill_iteration" and chains:
            chains[-1].append(str(payload["outcome"]))
    assert len(chains) == CHAINS
    assert evo["chains_accepting_nothing"] == sum(not {"IMPROVED", "KEPT"} & set(c) for c in chains)


def test_state_content_and_the_page(run: tuple[dict[str, Any], RunStore]) -> None:
    results, store = run
    conds = results["views"]["clr"]["conditions"]
    for c in conds.values():
        assert c["states"]["full_class_name_share"] is not None
        assert set(c["states_by_layer"]) == {"1", "2"}
        assert sum(s["n"] for s in c["states_by_layer"].values()) == c["states"]["n"]
    assert conds["reflexion"]["states"]["revealed_member_share"] > 0  # the lister keeps m0 in its reflections
    page = (Path(store.run_dir) / "report.html").read_text(encoding="utf-8")
    for table in ("clr-layers", "clr-states", "clr-pairs", "clr-tokens-table", "clr-gates-table", "clr-evoskill",
                  "clr-tf-grpo"):
        assert f'<table id="{table}">' in page
    assert "states with the full class name" in page
    assert page.count('<caption class="mechanism">evidence: mechanism') == 8  # every CLR table, the manifests' one
    assert '<table id="changes-table">' in page
    assert page.count("data:image/png;base64,") == 3  # layers, scatter, tokens
    assert page.count('<figure class="chart"><svg ') == 2  # the accuracy chart, the learning curves


CRASH = {"calls": 0, "at": 0}


@policy("clr-student-crashing")
def crashing(messages: Sequence[Message], params: GenParams) -> str:
    """clr-student that dies (like a kill) at call number CRASH["at"]."""
    CRASH["calls"] += 1
    if CRASH["calls"] == CRASH["at"]:
        raise KeyboardInterrupt("simulated kill")
    return clr_student(messages, params)


@pytest.mark.parametrize("billed", [True, False])
def test_a_resumed_run_counts_the_same_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, billed: bool) -> None:
    """A billed call is written ahead, so the cut unit's call stays in the ledger, unattributed; a scripted call's row
    waits for its unit and goes with it."""
    monkeypatch.setattr(ScriptedBackend, "billed", billed)
    spec = parse_spec({
        "name": "clr-resume", "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 2}},
        "methods": [{"name": "reflexion", "params": {"max_trials": 1}}],
        "models": {"s": {"backend": "scripted", "model": "clr-student-crashing", "max_retries": 0}},
        "roles": {"solver": "s", "reflector": "s"},
    })
    CRASH.update(calls=0, at=2)  # the first practice unit's reflection: its solver call is left in the ledger
    with pytest.raises(KeyboardInterrupt):
        run_experiment(spec, tmp_path / "cut", probe=False)  # the crash counts the cells' calls only
    CRASH["at"] = 0
    resumed = run_experiment(spec, tmp_path / "cut", probe=False)["views"]["clr"]["compare"]["tokens"]["reflexion"]
    whole = run_experiment(spec, tmp_path / "whole", probe=False)["views"]["clr"]["compare"]["tokens"]["reflexion"]
    assert resumed["ledger_aligned"] and whole["unattributed_calls"] == 0
    assert resumed["unattributed_calls"] == int(billed)
    assert resumed["layers"] == whole["layers"]
