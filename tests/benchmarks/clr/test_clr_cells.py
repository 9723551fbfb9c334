"""CLR record sets and grading, checked with real programs run in the sandbox.

The frozen ladder is the benchmark's design invariant: a program that applies each rule only to its
example scores (5-k)/5 at layer k; an exception list built from practice feedback passes practice but
not the single cells; knowing the class passes everything.
"""

from __future__ import annotations

from typing import Any

import pytest

from evoarena.benchmarks.clr import build_release, parse_domains, shipped_library
from evoarena.benchmarks.clr.cells import CellFactory
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import shipped_domains_text
from evoarena.benchmarks.clr.grading import membership_sentence, practice_answer, reference_totals, test_answer
from evoarena.benchmarks.clr.program import run_program
from evoarena.codec import from_plain
from evoarena.sandbox import SandboxLimits
from evoarena.scripted.clr.student import exclusion_program


def program_excluding(entity: str, excluded: dict[str, set[str]]) -> str:
    return exclusion_program(entity, excluded)


@pytest.fixture(scope="module")
def setup() -> dict[str, Any]:
    lib = shipped_library()
    domains = {d.id: d for d in parse_domains(shipped_domains_text(), lib)}
    chain = build_release(0)["chains"][0]
    slots = [from_plain(Slot, s) for s in chain["slots"]]
    domain = domains[chain["domain"]]
    return {"lib": lib, "domain": domain, "slots": slots, "cells": CellFactory(lib, domain, slots, f"{chain['id']}:0")}


def excluded_by(slots: list[Slot], pick: Any) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for s in slots:
        out.setdefault(s.field, set()).update(pick(s))
    return out


def layer_score(setup: dict[str, Any], k: int, program: str) -> float:
    lib, domain, slots = setup["lib"], setup["domain"], setup["slots"][:k]
    cells = setup["cells"].test_cells(k)
    run = run_program(program, [c.records for c in cells])
    right = 0
    for cell, got in zip(cells, run.totals, strict=True):
        want = test_answer(reference_totals(lib, slots, domain.entity, domain.entities, cell.records))
        right += got is not None and test_answer(got) == want
    return right / len(cells)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_frozen_ladder_and_the_class_oracle(setup: dict[str, Any], k: int) -> None:
    slots, entity = setup["slots"][:k], setup["domain"].entity
    lib = setup["lib"]
    example_only = program_excluding(entity, excluded_by(slots, lambda s: {s.example}))
    oracle = program_excluding(entity, excluded_by(slots, lambda s: set(lib.rosters[s.class_id].members)))
    assert layer_score(setup, k, example_only) == pytest.approx((5 - k) / 5)
    assert layer_score(setup, k, oracle) == 1.0


def practice_passes(setup: dict[str, Any], k: int, program: str, attempt: int = 1, rewarded: bool = False) -> bool:
    lib, domain, slots = setup["lib"], setup["domain"], setup["slots"][:k]
    inputs = [setup["cells"].public_example(k), *setup["cells"].hidden_practice(k, attempt, rewarded)]
    assert len(inputs) == 1 + 2 * k + 1
    run = run_program(program, [i.records for i in inputs])
    for rs, got in zip(inputs, run.totals, strict=True):
        want = practice_answer(reference_totals(lib, slots, domain.entity, domain.entities, rs.records))
        if got is None or practice_answer(got) != want:
            return False
    return True


def test_practice_rewards_memorising_the_revealed_member_but_rewarded_practice_does_not(setup: dict[str, Any]) -> None:
    k, entity, slots = 2, setup["domain"].entity, setup["slots"][:2]
    example_only = program_excluding(entity, excluded_by(slots, lambda s: {s.example}))
    exception_list = program_excluding(entity, excluded_by(slots, lambda s: {s.example, s.members[0]}))
    assert not practice_passes(setup, k, example_only)
    assert practice_passes(setup, k, exception_list)
    assert not practice_passes(setup, k, exception_list, attempt=2, rewarded=True)
    assert layer_score(setup, k, exception_list) == pytest.approx(3 / 5)  # the exception list does not generalise


def test_broken_programs_are_reported_not_crashing(setup: dict[str, Any]) -> None:
    cells = setup["cells"].test_cells(1)
    run = run_program("def solve(records):\n    return 1 / 0\n", [c.records for c in cells])
    assert run.totals == [None] * 5 and run.errors[0] and "ZeroDivisionError" in run.errors[0]
    run = run_program("def solve(records) return {}\n", [c.records for c in cells])
    assert run.failure and "SyntaxError" in run.failure
    run = run_program("def solve(records):\n    while True: pass\n", [cells[0].records],
                      SandboxLimits(wall_s=2.0, cpu_s=2))
    assert run.failure == "timed out" or run.totals == [None]


def test_feedback_sentences(setup: dict[str, Any]) -> None:
    s = setup["slots"][0]
    yes = membership_sentence(s, s.members[0], True)
    no = membership_sentence(s, s.practice_nonmember, False)
    assert s.label in yes and s.example in yes and "not counted" in yes
    assert "does not belong" in no and s.practice_nonmember in no


def test_practice_feedback_reveals_m0_and_n_p_and_nothing_unseen(setup: dict[str, Any]) -> None:
    from evoarena.benchmarks.clr.practice import grade_practice

    lib, domain, slots, factory = setup["lib"], setup["domain"], setup["slots"], setup["cells"]
    example_only = program_excluding(domain.entity, excluded_by(slots[:1], lambda s: {s.example}))
    result = grade_practice(lib, domain, slots, factory, 1, example_only, attempt=1)
    s = slots[0]
    assert not result.passed and result.n_inputs == 4
    assert f"{s.members[0]} belongs to {s.label}, like {s.example}" in result.feedback
    assert set(result.revealed) <= {s.members[0], s.practice_nonmember}
    assert s.members[1] not in result.feedback and s.members[2] not in result.feedback
    memorised = program_excluding(domain.entity, excluded_by(slots[:1], lambda s: {s.example, s.members[0]}))
    assert grade_practice(lib, domain, slots, factory, 1, memorised, attempt=2).passed
    rewarded = grade_practice(lib, domain, slots, factory, 1, memorised, attempt=2, rewarded=True)
    assert not rewarded.passed and s.members[1] in rewarded.revealed
    assert not grade_practice(lib, domain, slots, factory, 1, None, attempt=1).passed


def test_an_identical_program_on_identical_inputs_is_run_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from evoarena.benchmarks.clr import program as prog

    calls = []
    real = prog.run_python
    monkeypatch.setattr(prog, "run_python", lambda *a, **k: calls.append(1) or real(*a, **k))
    source = "def solve(records):\n    return {'x': len(records) + 7919}\n"
    first = run_program(source, [[{"a": 1}], []])
    assert run_program(source, [[{"a": 1}], []]) == first and len(calls) == 1
    assert first.totals == [{"x": 7920}, {"x": 7919}]
    run_program(source, [[]])  # other inputs: a new run
    assert len(calls) == 2
