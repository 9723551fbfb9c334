"""Reference totals, cell scoring and the counterexample sentences of CLR practice feedback."""

from __future__ import annotations

from collections.abc import Mapping

from evoarena.benchmarks.clr.cells import Records
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.library import Library


def reference_totals(
    lib: Library, slots: list[Slot], entity_key: str, entities: tuple[str, ...], records: Records
) -> dict[str, int]:
    """Records per entity, not counting any record whose value in a rule's field belongs to that rule's class."""
    totals = dict.fromkeys(entities, 0)
    classes = [(s.field, lib.rosters[s.class_id].members) for s in slots]
    for rec in records:
        if any(rec.get(f) in members for f, members in classes):
            continue
        totals[rec[entity_key]] = totals.get(rec[entity_key], 0) + 1
    return totals


def practice_answer(totals: Mapping[str, int]) -> int:
    """Practice asks for the largest entity total."""
    return max(totals.values()) if totals else 0


def test_answer(totals: Mapping[str, int]) -> int:
    """The test asks for the sum of entity totals."""
    return sum(totals.values())


test_answer.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def membership_sentence(slot: Slot, value: str, member: bool) -> str:
    """The seed's positive sentence (§6.2), and our symmetric negative one (clr-notes A3)."""
    if member:
        return f"{value} belongs to {slot.label}, like {slot.example}; records with this value are not counted."
    return f"{value} does not belong to {slot.label}, unlike {slot.example}; records with this value are counted."
