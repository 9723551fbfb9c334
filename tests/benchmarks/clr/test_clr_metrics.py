"""CLR metrics checked with real programs run in the sandbox on the first chain of the shipped release.

Three reference programs pin the metrics down: applying each rule only to its example (the frozen ladder:
inc 0, exc 1, no single cell), knowing the class (everything 1), and excluding every non-background value of
the field (inc 1 but exc 0). Broken programs give errors that are reported and counted in no rate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from evoarena.benchmarks.clr import build_release, parse_domains, shipped_library
from evoarena.benchmarks.clr.cells import CellFactory
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import shipped_domains_text
from evoarena.benchmarks.clr.metrics import (
    LayerScore,
    ValueOutcome,
    aggregate,
    cell_accuracy,
    layer_accuracy,
    mentions,
    score_layer,
    single_cell_accuracy,
    state_diagnostics,
    value_diagnostics,
)

Pick = Callable[[Slot], set[str]]


def program(entity: str, excluded: dict[str, set[str]], raise_on: str = "", bonus_on: str = "") -> str:
    """Counts records per entity, skipping excluded values; optionally crashes on, or miscounts, one value."""
    return (
        f"EXCLUDED = {excluded!r}\n"
        "def solve(records):\n"
        "    totals = {}\n"
        "    for r in records:\n"
        f"        if {raise_on!r} and {raise_on!r} in r.values():\n"
        "            raise ValueError('unexpected value')\n"
        f"        totals.setdefault(r[{entity!r}], 0)\n"
        f"        if {bonus_on!r} and {bonus_on!r} in r.values():\n"
        f"            totals[r[{entity!r}]] += 5\n"
        "        if any(r.get(f) in vals for f, vals in EXCLUDED.items()):\n"
        "            continue\n"
        f"        totals[r[{entity!r}]] += 1\n"
        "    return totals\n"
    )


def chain_setup(chain: dict[str, Any]) -> dict[str, Any]:
    lib = shipped_library()
    domains = {d.id: d for d in parse_domains(shipped_domains_text(), lib)}
    slots = [
        Slot(
            **{
                **s,
                "members": tuple(s["members"]),
                "test_nonmembers": tuple(s["test_nonmembers"]),
                "aliases": tuple(s["aliases"]),
                "competitors": tuple(s["competitors"]),
            }
        )
        for s in chain["slots"]
    ]
    domain = domains[chain["domain"]]
    return {
        "lib": lib,
        "domain": domain,
        "slots": slots,
        "factory": CellFactory(lib, domain, slots, f"{chain['id']}:0"),
    }


@pytest.fixture(scope="module")
def setup() -> dict[str, Any]:
    return chain_setup(build_release(0)["chains"][0])


def program_for(setup: dict[str, Any], k: int, pick: Pick) -> str:
    excluded: dict[str, set[str]] = {}
    for s in setup["slots"][:k]:
        excluded.setdefault(s.field, set()).update(pick(s))
    return program(setup["domain"].entity, excluded)


def evaluate(setup: dict[str, Any], pick: Pick) -> tuple[list[LayerScore], list[ValueOutcome]]:
    """Layers 1-4 of the chain, each with its own program: two sandbox runs per layer."""
    lib, domain, slots, factory = setup["lib"], setup["domain"], setup["slots"], setup["factory"]
    scores, outcomes = [], []
    for k in range(1, 5):
        prog = program_for(setup, k, pick)
        scores.append(score_layer(lib, domain, slots, k, factory.test_cells(k), prog))
        outcomes += value_diagnostics(lib, domain, slots, k, factory, prog)
    return scores, outcomes


def test_example_only_program_is_the_frozen_ladder(setup: dict[str, Any]) -> None:
    scores, outcomes = evaluate(setup, lambda s: {s.example})
    assert layer_accuracy(scores) == pytest.approx({1: 0.8, 2: 0.6, 3: 0.4, 4: 0.2})
    for ls in scores:
        assert [(c.kind, c.rule) for c in ls.cells] == [("clean", None)] * (5 - ls.layer) + [
            ("single", j) for j in range(1, ls.layer + 1)
        ]
        assert all(c.correct for c in ls.cells if c.kind == "clean")
        assert all(c.failure == "counted too many" for c in ls.cells if c.kind == "single")
    assert single_cell_accuracy(scores) == {"rate": 0.0, "hits": 0, "n": 10}
    assert cell_accuracy(scores, "clean") == {"rate": 1.0, "hits": 10, "n": 10}

    assert len(outcomes) == 12 * (1 + 2 + 3 + 4)  # example + m0..m2 + n_p + 7 n_t, per rule j <= k
    assert all(o.member == (o.role in ("example", "m0", "m1", "m2")) for o in outcomes)
    agg = aggregate(outcomes)
    assert agg["inc"] == {"rate": 0.0, "hits": 0, "n": 30, "errors": 0}
    assert agg["inc_u"]["rate"] == 0.0 and agg["inc_u"]["n"] == 20
    assert agg["exc"] == {"rate": 1.0, "hits": 80, "n": 80, "errors": 0}
    assert all(agg["by_role"][r]["rate"] == 0.0 for r in ("m0", "m1", "m2"))
    assert agg["by_role"]["n_p"]["rate"] == 1.0 and agg["by_role"]["n_t"]["n"] == 70
    assert agg["example"]["rate"] == 1.0  # sanity row: the example is excluded
    assert agg["errors"] == 0 and agg["reference_disagreements"] == 30  # every non-example member is counted
    assert sorted(agg["by_age"]) == [0, 1, 2, 3] and agg["by_age"][3]["inc"]["n"] == 3


def test_class_oracle_scores_one_everywhere(setup: dict[str, Any]) -> None:
    lib = setup["lib"]
    scores, outcomes = evaluate(setup, lambda s: set(lib.rosters[s.class_id].members))
    assert all(ls.score == 1.0 for ls in scores)
    assert single_cell_accuracy(scores)["rate"] == 1.0
    agg = aggregate(outcomes)
    assert (agg["inc"]["rate"], agg["inc_u"]["rate"], agg["exc"]["rate"]) == (1.0, 1.0, 1.0)
    assert all(rates[m]["rate"] == 1.0 for rates in agg["by_age"].values() for m in ("inc", "inc_u", "exc"))
    assert agg["reference_disagreements"] == 0
    assert all(o.outcome == o.expected and o.base_total is not None for o in outcomes)


def test_over_general_program_drops_the_non_members(setup: dict[str, Any]) -> None:
    lib, background = setup["lib"], setup["factory"].background
    scores, outcomes = evaluate(setup, lambda s: set(lib.universes[s.universe].values) - set(background[s.field]))
    assert layer_accuracy(scores) == pytest.approx({1: 0.8, 2: 0.6, 3: 0.4, 4: 0.2})  # clean cells still pass
    assert all(c.failure == "counted too few" for ls in scores for c in ls.cells if c.kind == "single")
    agg = aggregate(outcomes)
    assert agg["inc"]["rate"] == 1.0 and agg["inc_u"]["rate"] == 1.0
    assert agg["exc"] == {"rate": 0.0, "hits": 0, "n": 80, "errors": 0}


def test_crashing_program_gives_errors_in_no_rate(setup: dict[str, Any]) -> None:
    lib, domain, slots, factory = setup["lib"], setup["domain"], setup["slots"], setup["factory"]
    crash = "def solve(records):\n    return 1 / 0\n"
    ls = score_layer(lib, domain, slots, 2, factory.test_cells(2), crash)
    assert ls.score == 0.0 and all(c.got is None and c.failure == "no answer" for c in ls.cells)
    assert all(c.error and "ZeroDivisionError" in c.error for c in ls.cells)
    assert ls.run.errors[0] and "ZeroDivisionError" in ls.run.errors[0]
    outcomes = value_diagnostics(lib, domain, slots, 2, factory, crash)
    assert all(o.outcome == "error" and o.error and "ZeroDivisionError" in o.error for o in outcomes)
    agg = aggregate(outcomes)
    assert agg["inc"] == {"rate": None, "hits": 0, "n": 0, "errors": 6} and agg["errors"] == len(outcomes) == 24


def test_a_crash_or_a_third_answer_on_one_value_is_an_error_only_there(setup: dict[str, Any]) -> None:
    lib, domain, slots, factory = setup["lib"], setup["domain"], setup["slots"], setup["factory"]
    s = slots[0]
    prog = program(domain.entity, {s.field: {s.example}}, raise_on=s.members[1], bonus_on=s.practice_nonmember)
    outcomes = {o.value: o for o in value_diagnostics(lib, domain, slots, 1, factory, prog)}
    crashed, third = outcomes[s.members[1]], outcomes[s.practice_nonmember]
    assert crashed.outcome == "error" and crashed.error and "ValueError" in crashed.error
    assert third.outcome == "error" and third.error and "changed by 6" in third.error
    assert outcomes[s.members[0]].outcome == "kept" and outcomes[s.test_nonmembers[0]].outcome == "kept"
    agg = aggregate(outcomes.values())
    assert agg["inc"] == {"rate": 0.0, "hits": 0, "n": 2, "errors": 1}
    assert agg["inc_u"] == {"rate": 0.0, "hits": 0, "n": 1, "errors": 1}
    assert agg["exc"] == {"rate": 1.0, "hits": 7, "n": 7, "errors": 1} and agg["errors"] == 2


def test_state_diagnostics_string_matches() -> None:
    slot = Slot(
        layer=1,
        field="currency",
        universe="currencies",
        label="settlement batch G2",
        class_id="gcc",
        class_name="Currencies of the Gulf Cooperation Council member states",
        aliases=("GCC", "Gulf currencies"),
        example="Saudi riyal",
        members=("Omani rial", "UAE dirham", "Qatari riyal"),
        practice_nonmember="Jordanian dinar",
        test_nonmembers=("Euro",),
        competitors=(),
        descriptions={},
    )
    seen = state_diagnostics("Batch G2: exclude Saudi riyal and OMANI\n rial; Jordanian dinar is counted.", slot)
    assert seen["revealed_member"] and seen["practice_nonmember"] and seen["example"]
    assert not seen["names_class"] and seen["class_matches"] == []
    named = state_diagnostics(
        "G2 = the gcc currencies, i.e. currencies of the Gulf Cooperation Council member states.", slot
    )
    assert named["names_class"] and named["full_class_name"] and named["class_matches"] == [slot.class_name, "GCC"]
    assert not named["revealed_member"]
    assert not state_diagnostics("GCCX members; Omani rials", slot)["names_class"]  # whole words only
    assert not state_diagnostics("Omani rials", slot)["revealed_member"]
    assert state_diagnostics("Gulf Currencies only", slot)["class_matches"] == ["Gulf currencies"]
    assert mentions("the Simón Bolívar International Airport", "Simon Bolivar International Airport")
    assert mentions("Beirut\u2013Rafic Hariri", "Beirut-Rafic Hariri") and not mentions("anything", "  ")


def confounded_values(setup: dict[str, Any]) -> set[tuple[int, str]]:
    """(rule, value): non-members of a rule that belong to another rule's class on the same field."""
    lib, slots = setup["lib"], setup["slots"]
    return {
        (s.layer, v)
        for s in slots
        for v in (s.practice_nonmember, *s.test_nonmembers)
        if any(o is not s and o.field == s.field and v in lib.rosters[o.class_id].members for o in slots)
    }


def test_non_members_held_by_another_active_class_are_left_out_of_exc() -> None:
    chains = [chain_setup(c) for c in build_release(0)["chains"]]
    found = [c for c in chains if confounded_values(c)]
    if not found:
        pytest.skip("no chain of the release has a non-member inside another rule's class on its field")
    setup = found[0]
    lib, domain, slots, factory = setup["lib"], setup["domain"], setup["slots"], setup["factory"]
    oracle = program_for(setup, 4, lambda s: set(lib.rosters[s.class_id].members))
    outcomes = value_diagnostics(lib, domain, slots, 4, factory, oracle)
    agg = aggregate(outcomes)
    assert {(o.rule, o.value) for o in outcomes if o.confounded} == confounded_values(setup)
    assert all(o.outcome == "excluded" for o in outcomes if o.confounded)  # a correct program drops them
    assert agg["exc"]["rate"] == 1.0 and agg["exc"]["n"] == 32 - agg["confounded"] > 0
    assert agg["reference_disagreements"] == 0
