"""Islands with ring migration and rejected mutations as negative evidence (search.islands, MILO-inspired)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evoarena.search.archive import Scored
from evoarena.search.base import ParentPolicy
from evoarena.search.islands import Island, IslandParent, Islands, Trial

ARCH = (
    Scored("r", (0.5,)),
    Scored("a", (0.7,), "r"),
    Scored("b", (0.6,), "r"),
    Scored("c", (0.9,), "a"),
    Scored("d", (0.2,), "b"),
)


def test_accepted_children_join_rejected_ones_are_kept_as_evidence() -> None:
    s = Islands.start(2, "r")
    s2 = s.record(0, Trial("a", "r", 0.7, True)).record(0, Trial("x", "r", 0.1, False, "regressed"))
    s2 = s2.record(1, Trial("y", "r", 0.3, False, "crashed"))
    assert s.islands[0] == Island(("r",))  # the old value is untouched
    assert s2.islands[0].members == ("r", "a") and s2.islands[1].members == ("r",)
    assert s2.islands[0].rejected == (Trial("x", "r", 0.1, False, "regressed"),)
    assert s2.islands[1].evidence("r") == (Trial("y", "r", 0.3, False, "crashed"),)
    assert s2.islands[0].evidence("a") == ()
    assert s2.record(0, Trial("a", "r", 0.7, True)).islands[0].members == ("r", "a")  # not listed twice


def test_a_parent_is_exhausted_when_its_last_children_were_all_rejected() -> None:
    def island(*outcomes: bool) -> Island:
        return Island(("p",), tuple(Trial(f"k{i}", "p", 0.0, ok) for i, ok in enumerate(outcomes)))

    assert island(False, False).exhausted("p", 2)
    assert island(True, False, False).exhausted("p", 2)
    assert not island(False, True, False).exhausted("p", 2)
    assert not island(False).exhausted("p", 2)  # too few children to judge
    assert not island(False, False, False).exhausted("p", 0)  # patience 0: never
    assert not island(False, False).exhausted("q", 1)  # another parent's record


def test_selection_skips_exhausted_parents_and_falls_back_when_all_are() -> None:
    s = Islands((Island(("r", "a", "b")),), patience=2, tournament=3)
    assert s.select(ARCH, random.Random(0), 0).id == "a"  # a tournament of all three: the best
    for i in range(2):
        s = s.record(0, Trial(f"bad{i}", "a", 0.0, False, "worse"))
    assert s.select(ARCH, random.Random(0), 0).id == "b"  # a skipped; b is the best of the rest
    for p in ("r", "b"):
        for i in range(2):
            s = s.record(0, Trial(f"{p}{i}", p, 0.0, False, "worse"))
    assert s.select(ARCH, random.Random(0), 0).id == "a"  # everyone exhausted: all members again


def test_tournament_draws_from_the_rng_and_is_deterministic() -> None:
    s = Islands((Island(("r", "a", "b", "d")),), tournament=1)
    picks = Counter(s.select(ARCH, random.Random(i), 0).id for i in range(400))
    assert set(picks) == {"r", "a", "b", "d"}  # size 1: uniform over members
    pair = Islands((Island(("r", "a", "b", "d")),), tournament=2)
    runs = [[pair.select(ARCH, rng, 0).id for _ in range(40)] for rng in (random.Random(4), random.Random(4))]
    assert runs[0] == runs[1] and "d" not in runs[0]  # the worst never wins a tournament of two


def test_migration_copies_each_best_to_the_next_island_every_m_generations() -> None:
    s = Islands((Island(("r", "c")), Island(("a", "d")), Island(("b",))), migrate_every=2)
    s = s.record(2, Trial("z", "b", 0.0, False, "worse"))
    once = s.advance(ARCH)
    assert once.generation == 1 and once.islands == s.islands  # not yet
    twice = once.advance(ARCH)
    assert twice.generation == 2
    # bests before migration: c, a, b; copied at once, so c does not travel on from island 1 to island 2
    assert [i.members for i in twice.islands] == [("r", "c", "b"), ("a", "d", "c"), ("b", "a")]
    assert twice.islands[2].rejected == s.islands[2].rejected  # evidence stays where it was
    # island 2 now holds a, its new best, which travels on to island 0
    again = twice.advance(ARCH).advance(ARCH)
    assert [i.members for i in again.islands] == [("r", "c", "b", "a"), ("a", "d", "c"), ("b", "a", "c")]


def test_one_island_migrates_onto_itself_harmlessly() -> None:
    s = Islands((Island(("r", "a")),), migrate_every=1)
    assert s.advance(ARCH).islands == s.islands


def test_island_parent_is_a_parent_policy() -> None:
    policy: ParentPolicy = IslandParent(Islands((Island(("r",)), Island(("a", "c"))), tournament=2), 1)
    assert policy.select(ARCH, random.Random(0)).id == "c"


@pytest.mark.parametrize("kw", [{"migrate_every": 0}, {"tournament": 0}, {"patience": -1}])
def test_bad_settings_are_refused(kw: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        Islands((Island(("r",)),), **kw)
    with pytest.raises(ValueError):
        Islands((Island(()),))
