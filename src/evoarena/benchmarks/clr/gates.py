"""Gate statistics of a CLR run (the paper's §10.1 gate column): how often a gated method refused to update.

- every condition: chains whose state never changed in practice, and practice layers passed;
- EvoSkill: iterations by outcome, skips by reason, malformed proposals, and chains that accepted nothing (no
  iteration IMPROVED or KEPT in the chain), plus final per-layer states holding no skill;
- Training-Free GRPO: groups (one per practice step), groups without a mixed outcome (all failed / all passed),
  chains where no group was mixed, and final per-layer states with an empty experience library.

A method's state is read through its own `state_view` (ReportContext.method_state), never by importing the method.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from evoarena.api.views import ReportContext
from evoarena.benchmarks.clr.compare_data import CellData, event_chain, read_events

ACCEPTED = ("IMPROVED", "KEPT")
EVOSKILL_KINDS = ("evoskill_iteration", "evoskill_discarded", "evoskill_skip", "evoskill_seed")
TF_GRPO_KINDS = ("no_mixed_group", "tf_grpo_update", "tf_grpo_group_capped")
MALFORMED = ("proposal", "skill")  # EvoSkill's `ctx.reject` names
Events = Mapping[str, list[tuple[str, dict[str, Any]]]]
State = Callable[[str], dict[str, Any]]  # version id -> the method's state_view of that version


def _rate(hits: int, n: int) -> float | None:
    return round(hits / n, 6) if n else None


def _state_share(cells: Sequence[CellData], state: State, test: Callable[[Mapping[str, Any]], bool]) -> dict[str, Any]:
    versions = [v for c in cells for v in c.layer_versions.values()]
    hits = sum(test(state(v)) for v in versions)
    return {"hits": hits, "n": len(versions), "rate": _rate(hits, len(versions))}


def _evoskill(cells: Sequence[CellData], events: Events, state: State) -> dict[str, Any]:
    rows = [e for c in cells for e in events.get(c.cell, [])]
    iterations = [p for k, p in rows if k == "evoskill_iteration"]
    malformed = sum(1 for k, p in rows if k == "rejected_output" and p.get("what") in MALFORMED)
    chains = [(c, ch) for c in cells for ch in c.chains]
    # the chain's final state holds the history of every iteration in that chain: a check on the events
    histories = [state(c.final_versions[ch])["history"] if ch in c.final_versions else [] for c, ch in chains]
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
        "states_without_skill": _state_share(cells, state, lambda s: not s["skills"]),
    }


def _tf_grpo(cells: Sequence[CellData], events: Events, state: State) -> dict[str, Any]:
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
        "states_empty": _state_share(cells, state, lambda s: not s["library"]),
    }


def gate_stats(ctx: ReportContext, cells: Sequence[CellData]) -> dict[str, dict[str, Any]]:
    """Per condition: chains, chains without a state change, practice layers passed; EvoSkill and TF-GRPO gates."""
    events = read_events(ctx.store, (*EVOSKILL_KINDS, *TF_GRPO_KINDS, "rejected_output"))
    evoskill, tf_grpo = partial(ctx.method_state, "evoskill"), partial(ctx.method_state, "tf_grpo")
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
            "evoskill": _evoskill(group, events, evoskill) if methods == {"evoskill"} else None,
            "tf_grpo": _tf_grpo(group, events, tf_grpo) if methods == {"tf_grpo"} else None,
        }
        out[cond] = row
    return out
