"""Islands with ring migration, rejected mutations kept as negative evidence. MILO-inspired: only MILO's abstract is
available (seed 002, l.375–377: "hierarchical lineage memory over island-based trees, using rejected mutations as
negative evidence"; per-island mutators given "parent-specific feedback"); island count, selection, migration and
the use of the evidence are not given there, so all of the following is our choice:

- K islands, each an ordered tuple of candidate ids (a view into one shared archive of `Scored`) and a log of the
  mutations tried on it (`Trial`: child id, parent id, score, accepted or not, reason);
- selection on an island: a tournament of `tournament` members drawn with `rng.sample`, the highest mean wins,
  ties to the earliest island member; members whose last `patience` children on this island were all rejected
  are skipped (all members are used again when every one is skipped); `patience` = 0 never skips;
- evidence stays on its island: a migrant starts with a clean record on the island it reaches;
  `Island.evidence(parent)` gives a parent's rejected children, for a mutator's prompt;
- every `migrate_every` generations (`advance`), each island's best (highest mean, the earliest among ties) is
  copied to the next island of the ring, all islands at once from the pre-migration state; no random draw;
  a candidate already there is not copied twice."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from evoarena.search.archive import Scored


@dataclass(frozen=True)
class Trial:
    """One mutation tried on an island: the child, its parent, its score, whether it was kept, and why not."""

    id: str
    parent: str
    score: float
    accepted: bool
    reason: str = ""


@dataclass(frozen=True)
class Island:
    """The ids living on one island (in arrival order) and the log of mutations tried on it."""

    members: tuple[str, ...]
    trials: tuple[Trial, ...] = ()

    @property
    def rejected(self) -> tuple[Trial, ...]:
        return tuple(t for t in self.trials if not t.accepted)

    def evidence(self, parent: str) -> tuple[Trial, ...]:
        """The rejected children of `parent` on this island, oldest first."""
        return tuple(t for t in self.rejected if t.parent == parent)

    def exhausted(self, parent: str, patience: int) -> bool:
        """True when `parent`'s last `patience` children here (patience ≥ 1) were all rejected."""
        last = [t for t in self.trials if t.parent == parent][-patience:] if patience > 0 else []
        return patience > 0 and len(last) == patience and not any(t.accepted for t in last)


def _by_id(archive: Sequence[Scored]) -> dict[str, Scored]:
    return {c.id: c for c in archive}


def _best(members: Sequence[str], by_id: dict[str, Scored]) -> str:
    """The member with the highest mean, the earliest among ties (a member missing from the archive: KeyError)."""
    best = members[0]
    for m in members:
        if by_id[m].mean > by_id[best].mean:
            best = m
    return best


@dataclass(frozen=True)
class Islands:
    """K islands on a ring; every method returns a new `Islands` (the value is immutable)."""

    islands: tuple[Island, ...]
    migrate_every: int = 5
    patience: int = 3
    tournament: int = 2
    generation: int = 0

    def __post_init__(self) -> None:
        if not self.islands or any(not i.members for i in self.islands):
            raise ValueError("Islands: at least one island, each with at least one member")
        if self.migrate_every < 1 or self.tournament < 1 or self.patience < 0:
            raise ValueError("Islands: migrate_every and tournament must be ≥ 1, patience ≥ 0")

    @classmethod
    def start(cls, k: int, root: str, migrate_every: int = 5, patience: int = 3, tournament: int = 2) -> Islands:
        """`k` islands, each holding only `root`."""
        return cls(tuple(Island((root,)) for _ in range(k)), migrate_every, patience, tournament)

    def record(self, island: int, trial: Trial) -> Islands:
        """Logs a mutation tried on `island`; an accepted child joins its members."""
        old = self.islands[island]
        kept = old.members + ((trial.id,) if trial.accepted and trial.id not in old.members else ())
        return self._with(island, Island(kept, (*old.trials, trial)))

    def select(self, archive: Sequence[Scored], rng: random.Random, island: int) -> Scored:
        """A tournament among the island's members that are not exhausted (one `rng.sample` draw)."""
        here = self.islands[island]
        live = [m for m in here.members if not here.exhausted(m, self.patience)] or list(here.members)
        drawn = set(rng.sample(live, min(self.tournament, len(live))))
        by_id = _by_id(archive)
        return by_id[_best([m for m in live if m in drawn], by_id)]

    def advance(self, archive: Sequence[Scored]) -> Islands:
        """One generation later; migrates when the new generation is a multiple of `migrate_every`."""
        nxt = replace(self, generation=self.generation + 1)
        return nxt.migrate(archive) if nxt.generation % self.migrate_every == 0 else nxt

    def migrate(self, archive: Sequence[Scored]) -> Islands:
        """Each island's best copied to the next island of the ring (island k − 1's to island 0)."""
        by_id = _by_id(archive)
        bests = [_best(i.members, by_id) for i in self.islands]
        out = list(self.islands)
        for k, best in enumerate(bests):
            to = (k + 1) % len(out)
            if best not in out[to].members:
                out[to] = Island((*out[to].members, best), out[to].trials)
        return replace(self, islands=tuple(out))

    def _with(self, k: int, island: Island) -> Islands:
        return replace(self, islands=(*self.islands[:k], island, *self.islands[k + 1 :]))


@dataclass(frozen=True)
class IslandParent:
    """`Islands.select` on one island, in the shape of a `ParentPolicy`."""

    state: Islands
    island: int

    def select(self, archive: Sequence[Scored], rng: random.Random) -> Scored:
        return self.state.select(archive, rng, self.island)
