"""CLR metrics (docs/benchmarks/clr-notes.md §6-7): layer scores on the five test cells, single-cell accuracy,
value-level diagnostics (inc, inc_u, exc) and string-match state diagnostics.

Readings of what seed 003 leaves open (clr-notes A9): the class pool of rule j is {m0, m1, m2, n_p} + N_t (the
example is probed too, as a sanity row outside every rate). A probe input adds one record carrying the value to
the example-only records; the value was *excluded* if the program's total is unchanged, *kept* if it grew by
exactly one. Any other answer (a crash, no answer, another change) is an *error*: reported, in no rate.
A non-member of rule j that belongs to another active rule's class on the same field (pools are disjoint per
chain, but classes overlap, e.g. OWASP injection CWEs vs the CWE Top 25) must be excluded by a correct program;
such a row is *confounded*: kept in the records and counted, but left out of exc.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evoarena.benchmarks.clr.cells import CellFactory, Records, RecordSet
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import Domain
from evoarena.benchmarks.clr.grading import reference_totals, test_answer
from evoarena.benchmarks.clr.library import Library
from evoarena.benchmarks.clr.program import ProgramRun, run_program

CellKind = Literal["clean", "single"]
Role = Literal["example", "m0", "m1", "m2", "n_p", "n_t"]
Outcome = Literal["excluded", "kept", "error"]
MEMBER_ROLES: tuple[Role, ...] = ("m0", "m1", "m2")
UNSEEN_ROLES: tuple[Role, ...] = ("m1", "m2")
NONMEMBER_ROLES: tuple[Role, ...] = ("n_p", "n_t")


@dataclass(frozen=True)
class CellOutcome:
    """One test cell: the reference sum of totals (`want`) and the program's (`got`, None if it gave none)."""

    name: str
    kind: CellKind
    rule: int | None  # the rule layer a single cell tests; None for clean cells
    want: int
    got: int | None
    correct: bool
    error: str | None = None

    @property
    def failure(self) -> str | None:
        """Direction of a wrong answer (Fig. 7a): 'counted too many' means something that belongs to a class
        was still counted (under-generalisation on net), 'counted too few' that a kept value was dropped."""
        if self.correct:
            return None
        if self.got is None:
            return "no answer"
        return "counted too many" if self.got > self.want else "counted too few"


@dataclass(frozen=True)
class LayerScore:
    """The layer-k test program graded once on the five cells."""

    layer: int
    cells: tuple[CellOutcome, ...]
    score: float  # fraction of cells answered correctly
    run: ProgramRun  # the raw sandbox run (per-input errors, whole-run failure)


@dataclass(frozen=True)
class ValueOutcome:
    """How the layer-k program treated one value of rule j's pool, read from one probe input pair."""

    layer: int
    rule: int
    value: str
    role: Role
    member: bool  # the value belongs to rule j's hidden class (roster truth)
    outcome: Outcome
    expected: Outcome  # what the reference totals do on the same probe under all k active rules
    base_total: int | None = None
    value_total: int | None = None
    error: str | None = None

    @property
    def confounded(self) -> bool:
        """The reference treats the value otherwise than rule j alone would (another active class holds it)."""
        return self.expected != ("excluded" if self.member else "kept")


def _cell_kind(cell: RecordSet, layers: dict[str, int]) -> tuple[CellKind, int | None]:
    """A cell is single when values were inserted for a rule (CellFactory.test_cells), clean otherwise."""
    if not cell.inserted:
        return "clean", None
    rules = {layers.get(label) for label in cell.inserted}
    if len(rules) != 1 or None in rules:
        raise ValueError(f"cell {cell.name!r}: inserted values for {sorted(cell.inserted)}, not one active rule")
    (rule,) = rules
    return "single", rule


def score_layer(
    lib: Library, domain: Domain, slots: Sequence[Slot], k: int, cells: Sequence[RecordSet], program: str
) -> LayerScore:
    """Run `program` once on the test cells of layer k (`CellFactory.test_cells(k)`) and grade every cell
    against the reference sum of totals under the first k rules. A cell without an answer is wrong."""
    active = list(slots[:k])
    layers = {s.label: s.layer for s in active}
    run = run_program(program, [c.records for c in cells])
    outcomes: list[CellOutcome] = []
    for cell, totals, error in zip(cells, run.totals, run.errors, strict=True):
        kind, rule = _cell_kind(cell, layers)
        want = test_answer(reference_totals(lib, active, domain.entity, domain.entities, cell.records))
        got = None if totals is None else test_answer(totals)
        outcomes.append(CellOutcome(cell.name, kind, rule, want, got, got == want, error or run.failure))
    score = sum(o.correct for o in outcomes) / len(outcomes) if outcomes else 0.0
    return LayerScore(k, tuple(outcomes), score, run)


def _pool(slot: Slot) -> list[tuple[Role, str]]:
    m0, m1, m2 = slot.members
    roles: list[tuple[Role, str]] = [("example", slot.example), ("m0", m0), ("m1", m1), ("m2", m2)]
    return [*roles, ("n_p", slot.practice_nonmember), *(("n_t", v) for v in slot.test_nonmembers)]


def _classify(base: int | None, with_value: int | None) -> tuple[Outcome, str | None]:
    if base is None or with_value is None:
        return "error", None
    if with_value == base:
        return "excluded", None
    if with_value == base + 1:
        return "kept", None
    return "error", f"total changed by {with_value - base} (neither 0 nor 1)"


def value_diagnostics(
    lib: Library, domain: Domain, slots: Sequence[Slot], k: int, factory: CellFactory, program: str
) -> list[ValueOutcome]:
    """Probe the layer-k program with every pool value of every rule j <= k (one sandbox run for the layer)."""
    active = list(slots[:k])
    inputs: list[Records] = []
    index: dict[str, int] = {}

    def add(records: Records) -> int:  # identical inputs (the shared example-only base) are run once
        key = json.dumps(records, sort_keys=True)
        if key not in index:
            index[key] = len(inputs)
            inputs.append(records)
        return index[key]

    def reference(records: Records) -> int:
        return test_answer(reference_totals(lib, active, domain.entity, domain.entities, records))

    probes: list[tuple[Slot, Role, str, int, int, Outcome]] = []
    for slot in active:
        for role, value in _pool(slot):
            base, with_value = factory.probe_input(k, slot, value)
            expected, _ = _classify(reference(base), reference(with_value))
            probes.append((slot, role, value, add(base), add(with_value), expected))
    run = run_program(program, inputs)
    totals = [None if t is None else test_answer(t) for t in run.totals]
    out: list[ValueOutcome] = []
    for slot, role, value, i_base, i_value, expected in probes:
        outcome, why = _classify(totals[i_base], totals[i_value])
        error = (why or run.errors[i_base] or run.errors[i_value] or run.failure) if outcome == "error" else None
        member = value in lib.rosters[slot.class_id].members
        out.append(
            ValueOutcome(k, slot.layer, value, role, member, outcome, expected, totals[i_base], totals[i_value], error)
        )
    return out


def _tally(rows: Iterable[ValueOutcome], hit: Outcome) -> dict[str, Any]:
    """Rate of `hit` among the rows that were read (errors are counted but left out of the rate)."""
    rows = list(rows)
    read = [r for r in rows if r.outcome != "error"]
    hits = sum(r.outcome == hit for r in read)
    return {"rate": hits / len(read) if read else None, "hits": hits, "n": len(read), "errors": len(rows) - len(read)}


def _rates(rows: list[ValueOutcome]) -> dict[str, dict[str, Any]]:
    return {
        "inc": _tally((r for r in rows if r.member and r.role in MEMBER_ROLES), "excluded"),
        "inc_u": _tally((r for r in rows if r.member and r.role in UNSEEN_ROLES), "excluded"),
        "exc": _tally((r for r in rows if not r.member and r.role in NONMEMBER_ROLES and not r.confounded), "kept"),
    }


def aggregate(outcomes: Iterable[ValueOutcome]) -> dict[str, Any]:
    """inc (members excluded), inc_u (unseen members m1, m2 excluded), exc (non-members kept), pooled over
    whatever the outcomes span (chains, layers, rules); per role, per rule age (k - j: 0 = the newest rule)
    for the retention view, and the example sanity row (a working program excludes it). Confounded non-members
    (see ValueOutcome.confounded) are counted under "confounded" and left out of exc and the per-role rates."""
    rows = list(outcomes)
    by_age: dict[int, list[ValueOutcome]] = defaultdict(list)
    for r in rows:
        by_age[r.layer - r.rule].append(r)
    by_role: dict[str, dict[str, Any]] = {}
    for role in (*MEMBER_ROLES, *NONMEMBER_ROLES):
        picked = [r for r in rows if r.role == role and not r.confounded]
        by_role[role] = _tally(picked, "excluded" if role in MEMBER_ROLES else "kept")
    return {
        **_rates(rows),
        "example": _tally((r for r in rows if r.role == "example"), "excluded"),
        "by_role": by_role,
        "by_age": {age: _rates(by_age[age]) for age in sorted(by_age)},
        "probes": len(rows),
        "errors": sum(r.outcome == "error" for r in rows),
        "confounded": sum(r.confounded for r in rows),
        "reference_disagreements": sum(r.outcome != r.expected for r in rows if r.outcome != "error"),
    }


def cell_accuracy(layer_scores: Iterable[LayerScore], kind: CellKind) -> dict[str, Any]:
    """Fraction of correct cells of one kind, pooled over every layer score given (chains x layers)."""
    cells = [c for ls in layer_scores for c in ls.cells if c.kind == kind]
    hits = sum(c.correct for c in cells)
    return {"rate": hits / len(cells) if cells else None, "hits": hits, "n": len(cells)}


def single_cell_accuracy(layer_scores: Iterable[LayerScore]) -> dict[str, Any]:
    """The seed's single-cell accuracy: zero for a program that applies each rule only to its example."""
    return cell_accuracy(layer_scores, "single")


def layer_accuracy(layer_scores: Iterable[LayerScore]) -> dict[int, float]:
    """Mean layer score per layer (over the chains whose scores are given)."""
    by_layer: dict[int, list[float]] = defaultdict(list)
    for ls in layer_scores:
        by_layer[ls.layer].append(ls.score)
    return {layer: sum(v) / len(v) for layer, v in sorted(by_layer.items())}


_PUNCT = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
    }
)


def _fold(text: str) -> str:
    """Case-, accent- and typography-insensitive form (curly quotes and dashes made plain)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_PUNCT))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def mentions(text: str, name: str) -> bool:
    """Whole-word, case-insensitive match of `name` in `text`; any run of whitespace matches a space."""
    words = _fold(name).split()
    if not words:
        return False
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)"
    return re.search(pattern, _fold(text)) is not None


def state_diagnostics(state_text: str, slot: Slot) -> dict[str, Any]:
    """String-match diagnostics of a state (§7.3): does it hold the revealed member m0 (and the practice
    non-member, the example), and does it name the hidden class (its name or any alias)?"""
    names = [slot.class_name, *slot.aliases]
    matched = [n for n in names if mentions(state_text, n)]
    return {
        "layer": slot.layer,
        "revealed_member": mentions(state_text, slot.members[0]),
        "practice_nonmember": mentions(state_text, slot.practice_nonmember),
        "example": mentions(state_text, slot.example),
        "names_class": bool(matched),
        "full_class_name": mentions(state_text, slot.class_name),
        "class_matches": matched,
    }
