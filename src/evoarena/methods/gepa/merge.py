"""GEPA's system-aware merge as released (gepa 0.1.4, `proposer/merge.py`; its scheduling in `core/engine.py`).

Two Pareto-front candidates with a common ancestor are combined component by component: where one descendant kept
the ancestor's text and the other changed it, the change is taken; where both changed it, the better-scoring
descendant's text (a tie: a random one); where both agree, that text. The merged candidate is scored on a stratified
subsample of 5 val instances and accepted when its sum is at least the better parent's sum there. Every random draw
is the release's, call for call, so a `random.Random` seeded alike gives the release's pair, ancestor, components and
subsample (tests/conformance/test_gepa.py). Candidates are pool positions; the pool's order is the release's
program index order.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, Field

SUBSAMPLE = 5
"""Val instances a merged candidate is scored on (`select_eval_subsample_for_merged_program`, num_subsample_ids=5)."""
ATTEMPTS = 10
"""Tries to find a pair, and pairs tried per find (`max_attempts=10` in both merge functions)."""

Triplet = tuple[int, int, int]


class MergeState(BaseModel):
    """The merge proposer's counters, kept across steps (`MergeProposer.__init__`): merges due, merges accepted so
    far, whether the last iteration added a candidate, the (i, j, ancestor) triplets tried, and the (i, j, sources)
    descriptions of merges built (`merges_performed`)."""

    due: int = 0
    tested: int = 0
    last_found_new: bool = False
    tried: list[Triplet] = Field(default_factory=list)
    built: list[tuple[int, int, tuple[int, ...]]] = Field(default_factory=list)


def ancestors(parents: Sequence[Sequence[int]], node: int, found: set[int] | None = None) -> list[int]:
    """Every ancestor of `node` through all its parents (a merged candidate has two), built as the release's
    `get_ancestors` builds it (the set's order is the order ancestors are drawn from)."""
    found = set() if found is None else found
    for p in parents[node]:
        if p not in found:
            found.add(p)
            ancestors(parents, p, found)
    return list(found)


def desirable(programs: Sequence[Mapping[str, str]], anc: int, i: int, j: int) -> bool:
    """Some component kept by one descendant and changed by the other (`does_triplet_have_desirable_predictors`)."""
    return any((programs[anc][n] in (programs[i][n], programs[j][n])) and programs[i][n] != programs[j][n]
               for n in programs[anc])


def find_pair(rng: random.Random, parents: Sequence[Sequence[int]], candidates: Sequence[int], state: MergeState,
              agg: Sequence[float], programs: Sequence[Mapping[str, str]]) -> Triplet | None:
    """(i, j, ancestor), i < j: two candidates, neither an ancestor of the other, with a common ancestor that scores
    no better than either, a desirable component and an untried triplet; the ancestor drawn ∝ its score
    (`find_common_ancestor_pair`). All-zero ancestor weights draw uniformly (the release raises ValueError)."""
    for _ in range(ATTEMPTS):
        if len(candidates) < 2:
            return None
        i, j = rng.sample(list(candidates), 2)
        if i == j:
            continue
        i, j = min(i, j), max(i, j)
        anc_i, anc_j = ancestors(parents, i), ancestors(parents, j)
        if j in anc_i or i in anc_j:
            continue
        common = [a for a in set(anc_i) & set(anc_j)
                  if (i, j, a) not in state.tried and agg[a] <= agg[i] and agg[a] <= agg[j]
                  and desirable(programs, a, i, j)]
        if common:
            weights = [agg[a] for a in common]
            if sum(weights) <= 0:
                return i, j, rng.choice(common)
            return i, j, rng.choices(common, k=1, weights=weights)[0]
    return None


def combine(rng: random.Random, programs: Sequence[Mapping[str, str]], agg: Sequence[float], i: int, j: int,
            anc: int) -> tuple[dict[str, str], tuple[int, ...]]:
    """The merged components and, per component, the candidate it came from (merge.py's per-predictor rule).
    Components are taken in the ancestor's order (the release iterates a set of names)."""
    merged = dict(programs[anc])
    sources: list[int] = []
    for name in programs[anc]:
        a, x, y = programs[anc][name], programs[i][name], programs[j][name]
        if a in (x, y) and x != y:
            src = j if a == x else i
        elif a not in (x, y):
            src = i if agg[i] > agg[j] else j if agg[j] > agg[i] else rng.choice([i, j])
        else:  # x == y
            src = i
        merged[name] = programs[src][name]
        sources.append(src)
    return merged, tuple(sources)


def attempt(rng: random.Random, programs: Sequence[Mapping[str, str]], parents: Sequence[Sequence[int]],
            candidates: Sequence[int], agg: Sequence[float], state: MergeState,
            overlap_ok: Callable[[int, int], bool]) -> tuple[dict[str, str], Triplet] | None:
    """A merge not built before, between candidates whose val support overlaps enough, or None
    (`sample_and_attempt_merge_programs_by_common_predictors`); records it in `state.built` and `state.tried`."""
    if len(candidates) < 2 or len(programs) < 3:
        return None
    for _ in range(ATTEMPTS):
        found = find_pair(rng, parents, candidates, state, agg, programs)
        if found is None:
            continue
        i, j, anc = found
        merged, sources = combine(rng, programs, agg, i, j, anc)
        if (i, j, sources) in state.built:
            continue
        if not overlap_ok(i, j):
            continue
        state.built.append((i, j, sources))
        state.tried.append(found)
        return merged, found
    return None


def subsample(rng: random.Random, scores1: Mapping[str, float], scores2: Mapping[str, float],
              n: int = SUBSAMPLE) -> list[str]:
    """Up to `n` shared val ids, ⌈n/3⌉ from each stratum — where parent 1 wins, where parent 2 wins, ties — then
    filled at random (`select_eval_subsample_for_merged_program`). Ids keep `scores1`'s order (the release's set
    of integer ids iterates ascending)."""
    common = [k for k in scores1 if k in scores2]
    strata = ([k for k in common if scores1[k] > scores2[k]], [k for k in common if scores2[k] > scores1[k]],
              [k for k in common if scores1[k] == scores2[k]])
    each = max(1, math.ceil(n / 3))
    chosen: list[str] = []
    for bucket in strata:
        if len(chosen) >= n:
            break
        free = [k for k in bucket if k not in chosen]
        take = min(len(free), each, n - len(chosen))
        if take > 0:
            chosen += rng.sample(free, k=take)
    left = n - len(chosen)
    if left > 0:
        unused = [k for k in common if k not in chosen]
        if len(unused) >= left:
            chosen += rng.sample(unused, k=left)
        elif common:
            chosen += rng.choices(common, k=left)
    return chosen[:n]


def accepts(after: Sequence[float], before: Sequence[float]) -> bool:
    """The merged candidate's subsample sum at least the better parent's (engine.py: `new_sum >= max(parent_sums)`,
    a tie accepted)."""
    return sum(after) >= max(before)


def schedule_after_accept(state: MergeState, max_invocations: int) -> None:
    """A reflective child joined the pool: a merge becomes due while fewer than `max_invocations` were accepted
    (engine.py `_run_reflective_batch`)."""
    state.last_found_new = True
    if state.tested < max_invocations:
        state.due += 1
