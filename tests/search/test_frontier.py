"""The bounded top-k frontier (search.frontier), EvoSkill's acceptance as released."""

from __future__ import annotations

from evoarena.search import Admission, BoundedFrontier


def test_admitted_while_there_is_room_however_bad() -> None:
    assert BoundedFrontier(3).admit([0.5, 0.9], 0.0) == Admission(True, None)


def test_full_frontier_evicts_the_worst_iff_strictly_better() -> None:
    f = BoundedFrontier(3)
    assert f.admit([0.5, 0.1, 0.2], 0.15) == Admission(True, 1)  # beats the worst, though worse than the best
    assert f.admit([0.5, 0.1, 0.2], 0.1) == Admission(False)  # ties the worst: discarded
    assert f.admit([0.5, 0.1, 0.2], 0.05) == Admission(False)


def test_the_worst_among_ties_is_the_latest() -> None:
    assert BoundedFrontier(3).admit([0.1, 0.5, 0.1], 0.3) == Admission(True, 2)


def test_a_sequence_of_children() -> None:
    scores = [0.5]
    f = BoundedFrontier(3)
    for child in (0.1, 0.2, 0.1, 0.15, 0.7):
        got = f.admit(scores, child)
        if got.evicted is not None:
            scores[got.evicted] = child
        elif got.admitted:
            scores.append(child)
    assert scores == [0.5, 0.7, 0.2]  # 0.1 tied the worst; 0.15 replaced the first 0.1; 0.7 replaced 0.15
