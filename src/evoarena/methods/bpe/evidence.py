"""What an episode says about the experience bank, read from its trace alone, and the bank's **pollution rate**.

An episode record (from the attempt's answer: the protocol's step-by-step trace, the BPE agent's step-0 note holding
the opening text) gives the steps by kind, the meta-actions by name, the notes written, the entries recalled (the ids
a recall's answer showed), and — replaying the rule-based belief over the opening text and the environment steps —
where each object was first seen and which receptacles were looked into.

Evidence per entry, from the episodes after it was written:
- a **search prior** "<object> is in/on <place>" is *checked* by an episode that saw the object (hit when its first
  sighting was at that place, miss otherwise) or looked into that place without ever seeing the object (miss);
- any entry is *recalled in a won / failed* episode when a recall showed it there.

Flags: a search prior is **polluted** when it missed at least once and at least as often as it hit (wrong at least
as often as right); an entry is **suspect** when recalled in at least one failed episode and in no won one. The
bank's pollution rate is (entries polluted or suspect) / (entries with any evidence); entries never checked nor
recalled are counted apart (`unjudged`). A changed claim (an update of the text) starts its evidence afresh."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evoarena.methods.bpe.agent import recalled_ids
from evoarena.methods.bpe.belief import ALFWORLD_NUMBER, name, replay, same_thing
from evoarena.methods.bpe.experience import Entry
from evoarena.methods.bpe.goal import goal

_META_NAME = re.compile(r"^(track|commit|recall|note)\[(.*)\]$", re.S)
FRESH = {"recalled_won": 0, "recalled_failed": 0, "checks": 0, "hits": 0, "misses": 0}


def trace_of(answer: str | None) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(outcome, trace) of an episode's answer; None when it has no step-by-step trace."""
    try:
        out = json.loads(answer or "")
        trace = list(out.get("trace") or [])
    except (ValueError, TypeError, AttributeError):
        return None
    return (out, trace) if trace else None


def episode_record(answer: str | None, *, won: bool | None = None) -> dict[str, Any] | None:
    """The episode as evidence (see the module doc); None without a trace."""
    found = trace_of(answer)
    if found is None:
        return None
    out, trace = found
    head = trace[0].get("agent") or {}
    start = str(head.get("start", ""))
    meta: Counter[str] = Counter()
    notes, recalled = [], []
    for s in trace:
        m = _META_NAME.match(str(s["action"])) if s.get("kind") == "meta" else None
        if m is None:
            continue
        meta[m.group(1)] += 1
        if m.group(1) == "note" and str(s["observation"]).startswith("Noted"):
            notes.append(m.group(2).strip())
        if m.group(1) == "recall":
            recalled += [i for i in recalled_ids(str(s["observation"])) if i not in recalled]
    belief = replay(start, ((str(s.get("kind", "env")), str(s["action"]), str(s["observation"])) for s in trace))
    env = [s for s in trace if s.get("kind", "env") == "env"]
    target = goal(start)
    return {"task_type": head.get("task_type") or target.kind, "goal": target.text, "thing": target.thing,
            "won": bool(out.get("won")) if won is None else bool(won), "score": float(out.get("score", 0.0)),
            "steps": len(trace), "stopped": out.get("stopped"),
            "kinds": dict(Counter(str(s.get("kind", "env")) for s in trace)), "meta": dict(meta),
            "notes": notes, "recalled": recalled, "actions": [str(s["action"]) for s in env],
            "effective": [str(s["action"]) for s in env if _effective(str(s["observation"]))],
            **belief.facts()}


def _effective(observation: str) -> bool:
    """An environment step that changed something ("You take…", "You open…"), not a refusal or a look."""
    text = observation.strip()
    return text.startswith("You ") and not re.match(r"You (can't|cannot|are |see |need |don't|have )", text)


def same_place(a: str, b: str) -> bool:
    return ALFWORLD_NUMBER.sub("", name(a)) == ALFWORLD_NUMBER.sub("", name(b))


def check_prior(obj: str, place: str, record: Mapping[str, Any]) -> str | None:
    """"hit", "miss" or None (the episode says nothing about the prior)."""
    sightings = [where for seen, where in record.get("first_seen", {}).items() if same_thing(obj, seen)]
    if sightings:
        return "hit" if any(same_place(place, w) for w in sightings) else "miss"
    if any(same_place(place, r) for r in record.get("looked", [])):
        return "miss"
    return None


def sighting(obj: str, record: Mapping[str, Any]) -> str | None:
    """Where the episode first saw `obj` (None when it did not)."""
    return next((w for seen, w in record.get("first_seen", {}).items() if same_thing(obj, seen)), None)


def update_evidence(evidence: dict[str, dict[str, int]], entries: Iterable[Entry],
                    record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Add one episode's evidence about the entries the bank held during it; returns the prior checks made
    ({id, object, location, result, seen})."""
    checks: list[dict[str, Any]] = []
    recalled = set(record.get("recalled", []))
    for e in entries:
        ev = evidence.setdefault(e.id, dict(FRESH))
        if e.id in recalled:
            ev["recalled_won" if record["won"] else "recalled_failed"] += 1
        if e.store == "search" and e.object and e.location:
            result = check_prior(e.object, e.location, record)
            if result is not None:
                ev["checks"] += 1
                ev["hits" if result == "hit" else "misses"] += 1
                checks.append({"id": e.id, "object": e.object, "location": e.location, "result": result,
                               "seen": sighting(e.object, record)})
    return checks


def flags(entry: Entry, ev: Mapping[str, int] | None) -> dict[str, bool]:
    ev = ev or FRESH
    polluted = entry.store == "search" and ev["misses"] >= 1 and ev["misses"] >= ev["hits"]
    suspect = ev["recalled_failed"] >= 1 and ev["recalled_won"] == 0
    judged = ev["checks"] > 0 or ev["recalled_won"] + ev["recalled_failed"] > 0
    return {"polluted": polluted, "suspect": suspect, "judged": judged}


def pollution(entries: Sequence[Entry], evidence: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """The bank's pollution (see the module doc), overall and per store, with the flagged ids."""
    per: dict[str, dict[str, int]] = {}
    polluted, suspect = [], []
    judged = 0
    for e in entries:
        f = flags(e, evidence.get(e.id))
        row = per.setdefault(e.store, {"entries": 0, "judged": 0, "polluted": 0, "suspect": 0})
        row["entries"] += 1
        row["judged"] += f["judged"]
        row["polluted"] += f["polluted"]
        row["suspect"] += f["suspect"]
        judged += f["judged"]
        if f["polluted"]:
            polluted.append(e.id)
        if f["suspect"]:
            suspect.append(e.id)
    flagged = len(set(polluted) | set(suspect))
    priors = [e for e in entries if e.store == "search" and e.object]
    checked = [e for e in priors if (evidence.get(e.id) or FRESH)["checks"] > 0]
    recalled = [e for e in entries if sum((evidence.get(e.id) or FRESH)[k] for k in ("recalled_won",
                                                                                       "recalled_failed")) > 0]
    return {"entries": len(entries), "judged": judged, "unjudged": len(entries) - judged, "flagged": flagged,
            "rate": flagged / judged if judged else None,
            "location_checked": len(checked), "location_polluted": len(polluted),
            "location_rate": len(polluted) / len(checked) if checked else None,
            "recalled": len(recalled), "suspect": len(suspect),
            "suspect_rate": len(suspect) / len(recalled) if recalled else None,
            "polluted_ids": polluted, "suspect_ids": suspect, "by_store": per}
