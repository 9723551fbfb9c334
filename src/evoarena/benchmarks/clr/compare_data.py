"""Read what the CLR comparison views need from a run store: the spec's conditions (to pair `self` with
`lesson`), each practice unit's cost in model tokens, and the gate events of EvoSkill and Training-Free GRPO.

Ledger rows and events carry the unit key they happened in. Every practice unit stores the cell's budget meter
after it (calls and tokens so far); a unit's metered calls are the last `Δcalls` non-error rows with its key
(calls left by a unit cut off before a resume are replayed by the redone unit, so they are a prefix, counted as
unattributed), checked against the meter's `Δtokens`. Events map to a chain through their unit key or payload.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from evoarena.store import RunStore, queries
from evoarena.store.queries import CellRow, UnitRow

PRACTICE_KEY = re.compile(r"^(?P<chain>.+)/L(?P<layer>\d+)/practice/a(?P<attempt>\d+)$")  # ClrBenchmark task ids
TEST_KEY = re.compile(r"^test/(?P<chain>.+)/L(?P<layer>\d+)/test$")
TASK_ID = re.compile(r"^(?:test/)?(?P<chain>.+)/L(?P<layer>\d+)/(?:practice|test)(?:/a\d+)?$")
NOT_A_LESSON = ("clr:class-name",)  # a reference condition, not a lesson


@dataclass(frozen=True)
class Condition:
    """One method entry of the spec: the condition label, the method, the solver's model and the update note."""

    name: str
    method: str
    model: str
    note: str | None
    group: str  # method, roles and every param but the note: equal groups differ only in the note


@dataclass(frozen=True)
class Pair:
    self_condition: str
    lesson_condition: str
    note: str
    source: str  # "spec" or "labels"


@dataclass(frozen=True)
class UnitCost:
    """One practice unit (one attempt and the update after it) of one chain and layer."""

    cell: str
    chain: str
    layer: int
    passed: bool
    changed: bool  # the unit left a new state version
    tokens: int  # from the budget meter: input + output
    input_tokens: int | None  # from the ledger; None when the cell's ledger could not be aligned
    output_tokens: int | None
    update_tokens: int | None  # tokens of every role but the solver


@dataclass
class CellData:
    cell: str
    condition: str
    method: str
    chains: list[str] = field(default_factory=list)
    units: list[UnitCost] = field(default_factory=list)
    final_versions: dict[str, str] = field(default_factory=dict)  # chain -> version after its last graded layer
    layer_versions: dict[tuple[str, int], str] = field(default_factory=dict)  # (chain, layer) -> tested version
    unattributed_calls: int = 0
    aligned: bool = True


def _note(params: Mapping[str, Any]) -> str | None:
    note = params.get("update_note")
    if note is None:
        return None
    return str(note).strip() or None


def spec_conditions(spec: Mapping[str, Any]) -> list[Condition]:
    """The spec's method entries (the `runs.spec_json` of the store) as conditions."""
    out = []
    for m in spec.get("methods", []):
        roles = {**spec.get("roles", {}), **m.get("roles", {})}
        params = {k: v for k, v in m.get("params", {}).items() if k != "update_note"}
        model = roles.get("solver") or next(iter(roles.values()), "")
        group = json.dumps([m["name"], roles, params], sort_keys=True)
        out.append(Condition(m.get("label") or m["name"], m["name"], str(model), _note(m.get("params", {})), group))
    return out


def is_lesson(note: str | None) -> bool:
    return bool(note) and str(note).partition("@")[0] not in NOT_A_LESSON


def lesson_pairs(conditions: Sequence[Condition]) -> list[Pair]:
    """self -> lesson pairs from the spec: same method, model, roles and params; the self one has no update note,
    the other a lesson note (anything but the class-name reference). A group with two note-less entries is
    ambiguous and gives no pair."""
    groups: dict[str, list[Condition]] = defaultdict(list)
    for c in conditions:
        groups[c.group].append(c)
    pairs = []
    for members in groups.values():
        selfs = [c for c in members if c.note is None]
        if len(selfs) != 1:
            continue
        pairs += [Pair(selfs[0].name, c.name, str(c.note), "spec") for c in members if is_lesson(c.note)]
    return sorted(pairs, key=lambda p: (p.self_condition, p.lesson_condition))


def label_pairs(conditions: Iterable[str]) -> list[Pair]:
    """Fallback without a spec: `X-lesson` pairs with `X-self`, else with `X`."""
    names = set(conditions)
    pairs = []
    for name in sorted(names):
        if name.endswith("-lesson"):
            base = name.removesuffix("-lesson")
            partner = f"{base}-self" if f"{base}-self" in names else base if base in names else None
            if partner:
                pairs.append(Pair(partner, name, "(from the labels)", "labels"))
    return pairs


def run_pairs(spec: Mapping[str, Any] | None, conditions: Iterable[str]) -> list[Pair]:
    """Pairs from the run's spec; from the condition labels only when the store holds no readable spec."""
    return lesson_pairs(spec_conditions(spec)) if spec else label_pairs(conditions)


class Metered(Protocol):
    """A ledger row as unit_calls reads it (evoarena.store.CallRow)."""

    @property
    def unit(self) -> str | None: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...


C = TypeVar("C", bound=Metered)


def unit_calls(
    units: Sequence[tuple[str, Mapping[str, Any]]], calls: Sequence[C], start: Mapping[str, Any],
    meters: Mapping[str, str] | None = None,
) -> tuple[dict[str, list[C]], int, bool]:
    """Each practice unit's metered calls: the last `Δcalls` of the ledger rows carrying its unit key (a unit
    cut off before a resume left a prefix that the redone unit replays; those rows are unattributed). `meters` names
    the meter a unit's budget was read from where it is not the cell's (an episode run beside others counts on its
    own, from zero); units of one meter come in the order they ran.
    Returns ({unit: rows}, unattributed rows, whether every unit's tokens match its meter)."""
    by_unit: dict[str, list[C]] = defaultdict(list)
    for r in calls:
        by_unit[str(r.unit)].append(r)
    out: dict[str, list[C]] = {}
    prev: dict[str, tuple[int, int]] = {"": (int(start.get("calls", 0)), int(start.get("tokens", 0)))}
    skipped, aligned = 0, True
    for key, budget in units:
        meter = (meters or {}).get(key, "")
        prev_calls, prev_tokens = prev.get(meter, (0, 0))
        n, tokens = int(budget["calls"]) - prev_calls, int(budget["tokens"]) - prev_tokens
        rows = by_unit.get(key, [])
        out[key] = rows[len(rows) - n :] if n else []
        skipped += len(rows) - len(out[key])
        aligned = aligned and sum(r.input_tokens + r.output_tokens for r in out[key]) == tokens
        prev[meter] = (int(budget["calls"]), int(budget["tokens"]))
    return out, skipped, aligned


def read_cells(store: RunStore, cells: Sequence[CellRow]) -> list[CellData]:
    """Every finished curriculum cell of `cells` (the run's) with its practice units, their costs and the chain's
    tested versions."""
    units: dict[str, list[UnitRow]] = defaultdict(list)
    for row in queries.units(store):
        units[row.cell].append(row)
    tested = queries.tested_versions(store)
    out = []
    for c in cells:
        if c.status != "done":
            continue
        data = CellData(c.cell, c.condition, c.method)
        for t in tested:
            m = TEST_KEY.match(t.unit_key)
            if t.cell == c.cell and m:
                data.layer_versions[(m["chain"], int(m["layer"]))] = t.version_id
        last: dict[str, int] = {}
        for chain, layer in data.layer_versions:
            last[chain] = max(layer, last.get(chain, 0))
        data.final_versions = {ch: data.layer_versions[(ch, k)] for ch, k in last.items()}
        _costs(store, data, units[c.cell])
        data.chains = sorted(set(last) | {u.chain for u in data.units})
        out.append(data)
    return out


def _costs(store: RunStore, data: CellData, units: Sequence[UnitRow]) -> None:
    init = next((u.result for u in units if u.key == "init"), {})
    practice = [(u.key, u.result) for u in units if PRACTICE_KEY.match(u.key)]
    calls = queries.calls(store, cell=data.cell, phase="practice", errors=False)
    meters = {k: _chain(k) for k, r in practice if r.get("budget_scope") == "episode"}
    # a cumulative meter's units in the order they ran; an episode's after, chain by chain (episodes that ran side by
    # side interleave in the store), each in the order it ran
    practice.sort(key=lambda kr: (kr[0] in meters, meters.get(kr[0], "")))
    by_unit, data.unattributed_calls, data.aligned = unit_calls(
        [(k, r["budget"]) for k, r in practice], calls, init.get("budget", {}), meters)
    prev_tokens: dict[str, int] = {"": int(init.get("budget", {}).get("tokens", 0))}
    prev_version, chain_of_prev = init.get("version"), None
    for key, result in practice:
        m = PRACTICE_KEY.match(key)
        assert m is not None
        if m["chain"] != chain_of_prev:  # a fresh state per chain: compare with the initial version
            prev_version, chain_of_prev = init.get("version"), m["chain"]
        meter = meters.get(key, "")
        rows = by_unit.get(key) if data.aligned else None
        data.units.append(UnitCost(
            cell=data.cell, chain=m["chain"], layer=int(m["layer"]), passed=bool(result.get("passed")),
            changed=result.get("version") != prev_version,
            tokens=int(result["budget"]["tokens"]) - prev_tokens.get(meter, 0),
            input_tokens=None if rows is None else sum(r.input_tokens for r in rows),
            output_tokens=None if rows is None else sum(r.output_tokens for r in rows),
            update_tokens=None if rows is None else sum(
                r.input_tokens + r.output_tokens for r in rows if r.role != "solver"),
        ))
        prev_tokens[meter], prev_version = int(result["budget"]["tokens"]), result.get("version")


def _chain(key: str) -> str:
    m = PRACTICE_KEY.match(key)
    return m["chain"] if m else ""


def event_chain(payload: Mapping[str, Any]) -> str | None:
    """The chain an event belongs to, when its payload names the unit or the task."""
    for key in ("unit", "task_id"):
        m = TASK_ID.match(str(payload.get(key, "")))
        if m:
            return m["chain"]
    return None


def read_events(store: RunStore, kinds: Sequence[str]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """{cell: [(kind, payload), ...]} in the order they happened."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for e in queries.events(store, kinds):
        payload = dict(e.payload)
        if e.unit:
            payload.setdefault("unit", e.unit)
        out[e.cell or ""].append((e.kind, payload))
    return out
