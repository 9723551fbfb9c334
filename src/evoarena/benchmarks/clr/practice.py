"""Grading one practice attempt: run the program on the public example and the 2k+1 hidden inputs, and turn
every failing input into a counterexample that says, for each altered value, whether it belongs to the label."""

from __future__ import annotations

from dataclasses import dataclass

from evoarena.benchmarks.clr.cells import CellFactory, RecordSet
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import Domain
from evoarena.benchmarks.clr.grading import membership_sentence, practice_answer, reference_totals
from evoarena.benchmarks.clr.library import Library
from evoarena.benchmarks.clr.program import run_program


@dataclass(frozen=True)
class PracticeResult:
    passed: bool
    n_inputs: int
    n_failed: int
    feedback: str  # what the agent is told
    revealed: tuple[str, ...]  # values whose membership the feedback disclosed


def _counterexample(
    rs: RecordSet, slots: dict[str, Slot], lib: Library, error: str | None
) -> tuple[list[str], set[str]]:
    lines = [f"Failed on {rs.name}" + (f" (the program raised {error})" if error else "") + "."]
    revealed: set[str] = set()
    for label, values in rs.inserted.items():
        slot = slots[label]
        for v in values:
            if v == slot.example:
                lines.append(f"{v} belongs to {label} wherever it appears; records with this value are not counted.")
                continue
            lines.append(membership_sentence(slot, v, v in lib.rosters[slot.class_id].members))
            revealed.add(v)
    return lines, revealed


def grade_practice(
    lib: Library,
    domain: Domain,
    slots: list[Slot],
    factory: CellFactory,
    k: int,
    program: str | None,
    *,
    attempt: int,
    rewarded: bool = False,
) -> PracticeResult:
    """`program` None means the solver's output held no program: every input fails, and no value is revealed."""
    inputs = [factory.public_example(k), *factory.hidden_practice(k, attempt, rewarded)]
    if program is None:
        return PracticeResult(False, len(inputs), len(inputs), "No program was found in the reply.", ())
    run = run_program(program, [rs.records for rs in inputs])
    active = {s.label: s for s in slots[:k]}
    lines: list[str] = []
    revealed: set[str] = set()
    failed = 0
    for rs, got, err in zip(inputs, run.totals, run.errors, strict=True):
        want = practice_answer(reference_totals(lib, slots[:k], domain.entity, domain.entities, rs.records))
        if got is not None and practice_answer(got) == want:
            continue
        failed += 1
        more, shown = _counterexample(rs, active, lib, err)
        lines.extend(more)
        revealed |= shown
    feedback = "All practice inputs passed." if failed == 0 else "\n".join(lines)
    return PracticeResult(failed == 0, len(inputs), failed, feedback, tuple(sorted(revealed)))
