"""Record sets for CLR: the public practice example, hidden practice inputs and the five test cells.

Readings of what seed 003 leaves open (docs/benchmarks/clr-notes.md §12): every record set holds all
active rules' example values (A13); background trap-field values come from the universe outside every
pool and every class of the chain, so they are always counted; hidden practice input 1 moves every
rule's example to other records (A10); rewarded practice inserts m1 for every rule into the input that
already holds its m0 (A11).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import Domain
from evoarena.benchmarks.clr.library import Library

Records = list[dict[str, str]]
N_RECORDS = 24
EXAMPLE_COPIES = 3


@dataclass(frozen=True)
class RecordSet:
    """One input: records plus the values that were deliberately placed in it (for feedback)."""

    name: str
    records: Records
    inserted: dict[str, list[str]] = field(default_factory=dict)  # rule label -> values inserted for it


def background_values(lib: Library, domain: Domain, slots: list[Slot]) -> dict[str, list[str]]:
    """Per trap field, values that belong to no chain class on that field and to no pool: always counted."""
    out: dict[str, list[str]] = {}
    used = {v for s in slots for v in (s.example, *s.pool())}
    for f in domain.fields:
        classes = [lib.rosters[s.class_id].members for s in slots if s.field == f.name]
        banned = used.union(*classes) if classes else used
        out[f.name] = sorted(set(lib.universes[f.universe].values) - banned)
    return out


class CellFactory:
    """Seeded record sets for one chain. Every set is a pure function of (chain seed, purpose)."""

    def __init__(self, lib: Library, domain: Domain, slots: list[Slot], seed: str) -> None:
        self.domain = domain
        self.slots = slots
        self.seed = seed
        self.background = background_values(lib, domain, slots)

    def _base(self, purpose: str, k: int) -> tuple[random.Random, Records]:
        rng = random.Random(f"{self.seed}:{purpose}")
        records: Records = []
        for _ in range(N_RECORDS):
            records.append(self._background_record(rng, records, rng.choice(self.domain.entities)))
        for s in self.slots[:k]:
            for idx in rng.sample(range(N_RECORDS), EXAMPLE_COPIES):
                records[idx][s.field] = s.example
        return rng, records

    def _background_record(self, rng: random.Random, records: Records, entity: str) -> dict[str, str]:
        rec = {"id": f"r{len(records):03d}", self.domain.entity: entity}
        for f in self.domain.fields:
            rec[f.name] = rng.choice(self.background[f.name])
        return rec

    def _top_entity(self, rng: random.Random, records: Records, k: int) -> str:
        """The entity with the largest total, made unique by adding a background record if needed, so that a
        practice input's inserted records change the largest total whenever they are mishandled."""
        examples = {(s.field, s.example) for s in self.slots[:k]}
        totals = dict.fromkeys(self.domain.entities, 0)
        for r in records:
            if not any((f, r.get(f)) in examples for f, _ in examples):
                totals[r[self.domain.entity]] += 1
        best = max(totals.values())
        top = sorted(e for e, t in totals.items() if t == best)
        if len(top) > 1:
            records.append(self._background_record(rng, records, top[0]))
        return top[0]

    def _insert(
        self, rng: random.Random, records: Records, slot: Slot, values: list[str], entity: str | None = None
    ) -> None:
        """Append one record per value, carrying it in the slot's field (other fields stay background)."""
        for v in values:
            rec = self._background_record(rng, records, entity or rng.choice(self.domain.entities))
            rec[slot.field] = v
            records.append(rec)

    def public_example(self, k: int) -> RecordSet:
        return RecordSet("public example", self._base(f"public:{k}", k)[1])

    def hidden_practice(self, k: int, attempt: int, rewarded: bool = False) -> list[RecordSet]:
        """2k+1 inputs: examples moved to other records; then per rule j <= k: +m0, and +m0 +n_p."""
        _, moved = self._base(f"moved:{k}", k)  # _base places the examples on records drawn for this purpose
        out = [RecordSet("examples on other records", moved, {s.label: [s.example] for s in self.slots[:k]})]
        for s in self.slots[:k]:
            rng, recs = self._base(f"m0:{k}:{s.layer}", k)
            values = [s.members[0]] + ([s.members[1]] if rewarded and attempt >= 2 else [])
            self._insert(rng, recs, s, values, self._top_entity(rng, recs, k))
            out.append(RecordSet(f"rule {s.layer}: revealed member", recs, {s.label: values}))
            rng, recs = self._base(f"m0np:{k}:{s.layer}", k)
            self._insert(rng, recs, s, [s.members[0], s.practice_nonmember], self._top_entity(rng, recs, k))
            out.append(
                RecordSet(
                    f"rule {s.layer}: revealed member and practice non-member",
                    recs,
                    {s.label: [s.members[0], s.practice_nonmember]},
                )
            )
        return out

    def test_cells(self, k: int) -> list[RecordSet]:
        """5 cells: 5-k clean ones (example values only) and one single cell per rule j <= k (its unseen members
        m1, m2 and its seven test non-members)."""
        cells = [RecordSet(f"clean {i + 1}", self._base(f"clean:{k}:{i}", k)[1]) for i in range(5 - k)]
        for s in self.slots[:k]:
            rng, recs = self._base(f"single:{k}:{s.layer}", k)
            values = [s.members[1], s.members[2], *s.test_nonmembers]
            self._insert(rng, recs, s, values)
            cells.append(RecordSet(f"single rule {s.layer}", recs, {s.label: values}))
        return cells

    def probe_input(self, k: int, slot: Slot, value: str) -> tuple[Records, Records]:
        """For value-level diagnostics: the example-only records, and the same plus one record carrying `value`."""
        rng, recs = self._base(f"probe:{k}", k)
        with_value = [dict(r) for r in recs]
        self._insert(rng, with_value, slot, [value])
        return recs, with_value
