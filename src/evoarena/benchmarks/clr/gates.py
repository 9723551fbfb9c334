"""Gate statistics of a CLR run (the paper's §10.1 gate column): how often a gated method refused to update.

- every condition: chains whose state never changed in practice, and practice layers passed;
- EvoSkill: iterations by outcome, skips by reason, malformed proposals, and chains that accepted nothing (no
  iteration IMPROVED or KEPT in the chain), plus final per-layer states holding no skill;
- Training-Free GRPO: groups (one per practice step), groups without a mixed outcome (all failed / all passed),
  chains where no group was mixed, and final per-layer states with an empty experience library.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evoarena.benchmarks.clr.compare_data import CellData, event_chain, read_events
from evoarena.harness import load_tree
from evoarena.store import RunStore

ACCEPTED = ("IMPROVED", "KEPT")
EVOSKILL_KINDS = ("evoskill_iteration", "evoskill_discarded", "evoskill_skip", "evoskill_seed")
TF_GRPO_KINDS = ("no_mixed_group", "tf_grpo_update", "tf_grpo_group_capped")
MALFORMED = ("proposal", "skill")  # EvoSkill's `ctx.reject` names
Events = Mapping[str, list[tuple[str, dict[str, Any]]]]


def _rate(hits: int, n: int) -> float | None:
    return round(hits / n, 6) if n else None


class _Trees:
    """Harness trees by version id, loaded once."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._trees: dict[str, dict[str, str]] = {}

    def __call__(self, version: str) -> dict[str, str]:
        if version not in self._trees:
            self._trees[version] = load_tree(self.store, version)
        return self._trees[version]


def _state_share(cells: Sequence[CellData], trees: _Trees, test: Callable[[Mapping[str, str]], bool]) -> dict[str, Any]:
    versions = [v for c in cells for v in c.layer_versions.values()]
    hits = sum(test(trees(v)) for v in versions)
    return {"hits": hits, "n": len(versions), "rate": _rate(hits, len(versions))}


def _evoskill(cells: Sequence[CellData], events: Events, trees: _Trees) -> dict[str, Any]:
    from evoarena.methods.evoskill import read_history, skills_of

    rows = [e for c in cells for e in events.get(c.cell, [])]
    iterations = [p for k, p in rows if k == "evoskill_iteration"]
    malformed = sum(1 for k, p in rows if k == "rejected_output" and p.get("what") in MALFORMED)
    chains = [(c, ch) for c in cells for ch in c.chains]
    # the chain's final state holds the history of every iteration in that chain: a check on the events
    histories = [read_history(trees(c.final_versions[ch])) if ch in c.final_versions else [] for c, ch in chains]
    in_states = sum(len(h) for h in histories)
    if all(event_chain(p) for p in iterations):  # events carry their unit key: count from them
        accepting = {(c.cell, event_chain(p)) for c in cells for k, p in events.get(c.cell, [])
                     if k == "evoskill_iteration" and p.get("outcome") in ACCEPTED}
        nothing = sum((c.cell, ch) not in accepting for c, ch in chains)
        source = "events"
    else:  # a store written before events carried their unit
        nothing = sum(not any(h.get("outcome") in ACCEPTED for h in hist) for hist in histories)
        source = "final states"
    return {
        "chains_accepting_nothing": nothing,
        "source": source,
        "iterations": len(iterations),
        "iterations_in_states": in_states,
        "outcomes": dict(sorted(Counter(str(p.get("outcome")) for p in iterations).items())),
        "discarded": sum(1 for k, _ in rows if k == "evoskill_discarded"),
        "skips": dict(sorted(Counter(str(p.get("reason")) for k, p in rows if k == "evoskill_skip").items())),
        "proposals": len(iterations) + malformed,
        "malformed_proposals": malformed,
        "states_without_skill": _state_share(cells, trees, lambda t: not skills_of(t)),
    }


def _tf_grpo(cells: Sequence[CellData], events: Events, trees: _Trees) -> dict[str, Any]:
    from evoarena.methods.tf_grpo import read_library

    rows = [(c.cell, k, p) for c in cells for k, p in events.get(c.cell, [])]
    unmixed = [(cell, p) for cell, k, p in rows if k == "no_mixed_group"]
    groups: Counter[tuple[str, str]] = Counter((u.cell, u.chain) for c in cells for u in c.units)
    per_chain: Counter[tuple[str, str | None]] = Counter((cell, event_chain(p)) for cell, p in unmixed)
    mapped = all(chain is not None for _, chain in per_chain)
    return {
        "groups": sum(groups.values()),
        "no_mixed_groups": len(unmixed),
        "no_mixed_all_failed": sum(1 for _, p in unmixed if float(p.get("mean_reward", -1)) == 0.0),
        "no_mixed_all_passed": sum(1 for _, p in unmixed if float(p.get("mean_reward", -1)) == 1.0),
        "updates": sum(1 for _, k, _ in rows if k == "tf_grpo_update"),
        "capped_groups": sum(1 for _, k, _ in rows if k == "tf_grpo_group_capped"),
        "chains_without_mixed_group": sum(per_chain[key] >= n for key, n in groups.items()) if mapped else None,
        "states_empty": _state_share(cells, trees, lambda t: not read_library(t)),
    }


def gate_stats(store: RunStore, cells: Sequence[CellData]) -> dict[str, dict[str, Any]]:
    """Per condition: chains, chains without a state change, practice layers passed; EvoSkill and TF-GRPO gates."""
    events = read_events(store, (*EVOSKILL_KINDS, *TF_GRPO_KINDS, "rejected_output"))
    trees = _Trees(store)
    by_cond: dict[str, list[CellData]] = defaultdict(list)
    for c in cells:
        by_cond[c.condition].append(c)
    out: dict[str, dict[str, Any]] = {}
    for cond, group in sorted(by_cond.items()):
        changed = {(u.cell, u.chain) for c in group for u in c.units if u.changed}
        layers: dict[tuple[str, str, int], bool] = {}
        for u in (u for c in group for u in c.units):
            layers[(u.cell, u.chain, u.layer)] = layers.get((u.cell, u.chain, u.layer), False) or u.passed
        methods = {c.method for c in group}
        row: dict[str, Any] = {
            "method": ", ".join(sorted(methods)),
            "chains": sum(len(c.chains) for c in group),
            "chains_without_state_change": sum((c.cell, ch) not in changed for c in group for ch in c.chains),
            "practice_layers": len(layers),
            "practice_layers_passed": sum(layers.values()),
            "evoskill": _evoskill(group, events, trees) if methods == {"evoskill"} else None,
            "tf_grpo": _tf_grpo(group, events, trees) if methods == {"tf_grpo"} else None,
        }
        out[cond] = row
    return out
