"""Drawing CLR chains: per layer a hidden class, its example, members and look-alike non-members.

Follows seed 003 §3.1 and §4.1; our readings of what the seed leaves open are marked "Rec." in
docs/benchmarks/clr-notes.md §12 and listed in docs/benchmarks/clr.md.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass

from evoarena.benchmarks.clr.domains import Domain, TrapField
from evoarena.benchmarks.clr.library import Library, LibraryError, Roster

LAYERS = 4
N_TEST_NONMEMBERS = 7
MIN_OTHER_LISTS = 2  # the example must lie in at least two other rosters
_STOP = {
    "with",
    "that",
    "from",
    "whose",
    "which",
    "their",
    "this",
    "into",
    "over",
    "also",
    "most",
    "were",
    "been",
    "than",
    "other",
    "largest",
    "capital",
    "country",
    "city",
    "known",
    "about",
    "since",
    "founded",
}


@dataclass(frozen=True)
class Slot:
    """One layer of a chain: a rule on `field` whose opaque `label` stands for the hidden class."""

    layer: int
    field: str
    universe: str
    label: str
    class_id: str
    class_name: str
    aliases: tuple[str, ...]
    example: str
    members: tuple[str, str, str]  # m0 (revealed in practice), m1, m2 (unseen)
    practice_nonmember: str
    test_nonmembers: tuple[str, ...]
    competitors: tuple[str, ...]  # other rosters that contain the example
    descriptions: dict[str, str]

    def pool(self) -> list[str]:
        return [*self.members, self.practice_nonmember, *self.test_nonmembers]


@dataclass(frozen=True)
class Chain:
    id: str
    domain: str
    slots: tuple[Slot, ...]


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in _STOP}


def single_attribute_shortcut(members: list[str], nonmembers: list[str], descriptions: dict[str, str]) -> str | None:
    """A visible feature shared by every member and no non-member (a word of the descriptions, or a name
    prefix) would let the agent skip the class; return it, or None when there is none."""
    shared = set.intersection(*(_tokens(descriptions[m]) for m in members))
    for word in sorted(shared):
        if not any(word in _tokens(descriptions[n]) for n in nonmembers):
            return f"description word {word!r}"
    prefix = members[0][:3].lower()
    if all(m.lower().startswith(prefix) for m in members) and not any(n.lower().startswith(prefix) for n in nonmembers):
        return f"name prefix {prefix!r}"
    return None


def _label(rng: random.Random, noun: str, taken: set[str]) -> str:
    while True:
        code = rng.choice([c for c in string.ascii_uppercase if c not in "IO"]) + str(rng.randint(1, 9))
        if code not in taken:
            taken.add(code)
            return f"{noun} {code}"


def draw_slot(
    rng: random.Random, lib: Library, roster: Roster, used: set[str], banned: frozenset[str] = frozenset()
) -> dict[str, object] | None:
    """`banned`: members of the chain's earlier classes on the same field; no pool value may be one, so that a
    rule's look-alikes are never excluded by another rule (which would make its single cell a free pass)."""
    universe = lib.universes[roster.universe]
    used = used | banned
    members = sorted(roster.members - used)
    examples = [m for m in members if len(lib.competitors(roster, m)) >= MIN_OTHER_LISTS]
    rng.shuffle(examples)
    for example in examples[:6]:
        rest = [m for m in members if m != example]
        if len(rest) < 3:
            return None
        competitors = lib.competitors(roster, example)
        rival = sorted({v for c in competitors for v in c.members} - roster.members - used)
        if len(rival) < 1 + N_TEST_NONMEMBERS:
            continue
        for _ in range(5):
            chosen = rng.sample(rest, 3)
            nonmembers = rng.sample(rival, 1 + N_TEST_NONMEMBERS)
            descriptions = {v: universe.values[v] for v in [example, *chosen, *nonmembers]}
            if single_attribute_shortcut([example, *chosen], nonmembers, descriptions) is None:
                return {
                    "example": example,
                    "members": tuple(chosen),
                    "practice_nonmember": nonmembers[0],
                    "test_nonmembers": tuple(nonmembers[1:]),
                    "competitors": tuple(sorted(c.id for c in competitors)),
                    "descriptions": descriptions,
                }
    return None


def draw_chain(lib: Library, domain: Domain, index: int, seed: int, used_classes: set[str], tries: int = 20) -> Chain:
    """One chain of `LAYERS` slots. A draw that dead-ends is replaced by a redraw from a derived seed, so the
    result stays a pure function of (library, domain, index, seed, classes used so far)."""
    for attempt in range(tries):
        try:
            return _draw_chain(lib, domain, index, f"clr:{seed}:{domain.id}:{index}:{attempt}", used_classes)
        except LibraryError as err:
            last = err
    raise LibraryError(f"{last} (after {tries} redraws)")


def _draw_chain(lib: Library, domain: Domain, index: int, rng_seed: str, used_classes: set[str]) -> Chain:
    """Value pools are disjoint across the chain's layers; classes are not reused while unused ones remain."""
    rng = random.Random(rng_seed)
    used_here: set[str] = set()
    fields: list[TrapField] = list(domain.fields)
    rng.shuffle(fields)
    fields.append(rng.choice(fields))  # four layers over three trap fields: one field carries two rules
    used_values: set[str] = set()
    labels: set[str] = set()
    slots: list[Slot] = []
    for layer, planned in enumerate(fields, start=1):
        drawn, roster, field = None, None, planned
        # the planned field first; if its universe has no class left, another field of the domain
        for field in [planned, *[f for f in domain.fields if f != planned]]:
            candidates = sorted(lib.rosters_in(field.universe), key=lambda r: r.id)
            rng.shuffle(candidates)
            candidates.sort(key=lambda r: r.id in used_classes)  # unused classes first
            prior = [s for s in slots if s.field == field.name]
            banned = frozenset().union(*(lib.rosters[s.class_id].members for s in prior))
            prior_values = {v for s in prior for v in (s.example, *s.pool())}
            for roster in candidates:
                if roster.id in {s.class_id for s in slots} or roster.members & prior_values:
                    continue  # a later class must not hold an earlier rule's values on the same field
                drawn = draw_slot(rng, lib, roster, used_values, banned)
                if drawn is not None:
                    break
            if drawn is not None:
                break
        if drawn is not None and roster is not None:
            slot = Slot(
                layer=layer,
                field=field.name,
                universe=field.universe,
                label=_label(rng, field.label_noun, labels),
                class_id=roster.id,
                class_name=roster.name,
                aliases=roster.aliases,
                **drawn,  # type: ignore[arg-type]
            )
            used_values.update([slot.example, *slot.pool()])
            used_here.add(roster.id)
            slots.append(slot)
        else:
            raise LibraryError(f"{domain.id}: no usable hidden class for any trap field at layer {layer}")
    used_classes |= used_here
    return Chain(f"{domain.id}-{index}", domain.id, tuple(slots))
