"""Consolidation between episodes: the experience bank's add / update / remove, outside rollouts (the paper: an
external strong model at epoch boundaries; here the `consolidator` role, or rules for a model-free control).

The consolidator reads the bank and the episodes since the last consolidation (goal, outcome, actions that did
something, where the thing was found, notes, entries recalled, search priors the episode contradicted) and answers
one operation per line — `ADD <store>: <text>`, `UPDATE <id>: <text>`, `REMOVE <id>` — or `NONE`. Parsing is strict:
a line that is none of these rejects the whole reply; an operation that names an unknown id, a search prior not
worded "<object> is in/on <place>", an empty or overlong text, a format placeholder copied (`<place>`), a duplicate,
or one past `max_ops` is refused alone.

The rule option writes, per episode: a search prior for the goal's thing where it was first seen (or updates the one
that said otherwise); a prior the episode contradicted is moved to where the object was seen, or removed when it was
not seen; the notes (task-specific when the episode was won, common mistakes when not); a won episode's actions
that did something as a task-specific skill; for a failed episode that ran out of steps, its most repeated command
(3 or more times) as a mistake; entries recalled in 2 or more failed episodes and no won one are removed."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.methods.bpe.evidence import FRESH, flags, sighting
from evoarena.methods.bpe.experience import STORES, TITLES, Bank, location_prior
from evoarena.methods.prompting import render_prompt
from evoarena.models import Message

MAX_TEXT = 300
_FENCE = re.compile(r"^```\w*$")
_PLACEHOLDER = re.compile(r"<[a-z][a-z /_-]*>", re.I)
_LINE = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)?(ADD|UPDATE|REMOVE)\b\s*(.*)$", re.I)
_ADD = re.compile(r"^\[?([a-z -]+?)\]?\s*:\s*(.+)$", re.I)
_UPDATE = re.compile(r"^\[?([gtms]\d+)\]?\s*:\s*(.+)$", re.I)
_REMOVE = re.compile(r"^\[?([gtms]\d+)\]?\s*\.?$", re.I)
STORE_NAMES = {"general": "general", "task": "task", "task-specific": "task", "task specific": "task",
               "mistakes": "mistakes", "mistake": "mistakes", "common mistakes": "mistakes", "search": "search",
               "search priors": "search", "search prior": "search", "object-location": "search"}


class ConsolidationError(ValueError):
    """The consolidator's reply is not in the format; nothing of it is kept."""


@dataclass(frozen=True)
class Op:
    kind: str  # "add" | "update" | "remove"
    target: str  # the store (add) or the entry id
    text: str = ""

    def line(self) -> str:
        return f"{self.kind.upper()} {self.target}" + (f": {self.text}" if self.text else "")


def parse_ops(reply: str) -> list[Op]:
    """The operations of a reply ([] for NONE); ConsolidationError for anything else."""
    lines = [x.strip() for x in reply.strip().splitlines() if x.strip() and not _FENCE.match(x.strip())]
    if not lines:
        raise ConsolidationError("empty reply")
    if len(lines) == 1 and lines[0].rstrip(".").upper() == "NONE":
        return []
    ops: list[Op] = []
    for line in lines:
        m = _LINE.match(line)
        if m is None:
            raise ConsolidationError(f"not an operation: {line[:120]!r}")
        kind, rest = m.group(1).lower(), m.group(2).strip()
        if kind == "add":
            a = _ADD.match(rest)
            store = STORE_NAMES.get(a.group(1).strip().lower()) if a else None
            if a is None or store is None:
                raise ConsolidationError(f"ADD needs '<store>: <text>' with a store of {', '.join(STORES)}: "
                                         f"{line[:120]!r}")
            ops.append(Op("add", store, a.group(2).strip()))
        elif kind == "update":
            u = _UPDATE.match(rest)
            if u is None:
                raise ConsolidationError(f"UPDATE needs '<id>: <text>': {line[:120]!r}")
            ops.append(Op("update", u.group(1).lower(), u.group(2).strip()))
        else:
            r = _REMOVE.match(rest)
            if r is None:
                raise ConsolidationError(f"REMOVE needs an entry id: {line[:120]!r}")
            ops.append(Op("remove", r.group(1).lower()))
    return ops


def apply_ops(bank: Bank, ops: Sequence[Op], episode: int, *, source: str, max_ops: int,
              evidence: dict[str, dict[str, int]]) -> tuple[list[dict[str, Any]], list[tuple[Op, str]]]:
    """Apply what may be applied: (the changes made, with evictions; the ops refused with why)."""
    done: list[dict[str, Any]] = []
    refused: list[tuple[Op, str]] = []
    for n, op in enumerate(ops):
        why = _invalid(bank, op) if n < max_ops else f"past the {max_ops} operations allowed"
        if why:
            refused.append((op, why))
            continue
        if op.kind == "add":
            entry, evicted = bank.add(op.target, op.text, episode, source=source)
            done.append({"op": "add", "id": entry.id, "store": entry.store, "text": entry.text,
                         "evicted": evicted.id if evicted else None})
        elif op.kind == "update":
            entry = bank.update(op.target, op.text, episode)
            evidence[entry.id] = dict(FRESH)  # a changed claim starts its evidence afresh
            done.append({"op": "update", "id": entry.id, "store": entry.store, "text": entry.text})
        else:
            entry = bank.remove(op.target)
            done.append({"op": "remove", "id": entry.id, "store": entry.store, "text": entry.text})
    return done, refused


def _invalid(bank: Bank, op: Op) -> str | None:
    if op.kind in ("add", "update"):
        if not op.text.strip() or len(op.text) > MAX_TEXT:
            return f"the text must have 1 to {MAX_TEXT} characters"
        if _PLACEHOLDER.search(op.text):
            return "the text holds a placeholder (<…>) copied from the format"
        store = op.target if op.kind == "add" else getattr(bank.get(op.target), "store", None)
        if store is None:
            return f"no entry {op.target}"
        if store == "search" and location_prior(op.text) is None:
            return "a search prior must read '<object> is in/on <place>'"
        if bank.find_text(store, op.text) is not None:
            return "the same text is already in the store"
    elif bank.get(op.target) is None:
        return f"no entry {op.target}"
    return None


# -- the consolidator's prompt -------------------------------------------------------------------------------------
def prompt(bank: Bank, episodes: Sequence[Mapping[str, Any]], *, cap: int, max_ops: int) -> list[Message]:
    entries = [{"id": e.id, "store": TITLES[e.store], "usage": e.usage, "text": e.text} for e in bank.entries()]
    user = render_prompt(__package__, "consolidate", entries=entries, episodes=[_summary(ep) for ep in episodes],
                         cap=cap, max_ops=max_ops, stores=STORES)
    return [Message("system", render_prompt(__package__, "consolidate_system").strip()), Message("user", user.strip())]


def _summary(ep: Mapping[str, Any]) -> dict[str, Any]:
    thing = ep.get("thing")
    return {"episode": ep["episode"], "goal": ep.get("goal") or "(unknown)", "kind": ep.get("task_type") or "?",
            "outcome": ("won" if ep["won"] else f"not won ({ep.get('stopped')})") + f" in {ep['steps']} steps",
            "effective": ep.get("effective", [])[-20:], "found": sighting(thing, ep) if thing else None,
            "thing": thing, "notes": ep.get("notes", []), "recalled": ep.get("recalled", []),
            "contradicted": [c for c in ep.get("checks", []) if c["result"] == "miss"],
            "meta": ep.get("meta", {})}


# -- the rule-based option ---------------------------------------------------------------------------------------
def rule_ops(bank: Bank, episodes: Sequence[Mapping[str, Any]], evidence: Mapping[str, Mapping[str, int]]) -> list[Op]:
    """The rule option's operations for the episodes since the last consolidation (see the module doc)."""
    ops: list[Op] = []
    touched: set[str] = set()
    for ep in episodes:
        kind = ep.get("task_type") or "task"
        for check in ep.get("checks", []):
            if check["result"] == "miss" and check["id"] not in touched and bank.get(check["id"]) is not None:
                touched.add(check["id"])
                seen = check.get("seen")
                ops.append(Op("update", check["id"], f"The {check['object']} was found in/on the {seen}.") if seen
                           else Op("remove", check["id"]))
        thing = ep.get("thing")
        place = sighting(thing, ep) if thing else None
        if thing and place and not any(e.object == thing for e in bank.stores["search"]):
            ops.append(Op("add", "search", f"The {thing} was found in/on the {place}."))
        for note in ep.get("notes", []):
            ops.append(Op("add", "task" if ep["won"] else "mistakes", f"[{kind}] {note}"[:MAX_TEXT]))
        if ep["won"] and ep.get("effective"):
            ops.append(Op("add", "task", f"[{kind}] Won with: " + "; ".join(ep["effective"][:8]) + "."))
        if not ep["won"] and ep.get("stopped") == "budget" and ep.get("actions"):
            action, times = Counter(ep["actions"]).most_common(1)[0]
            if times >= 3:
                ops.append(Op("add", "mistakes", f"[{kind}] Ran out of steps after sending '{action}' {times} "
                                                 f"times; try something else once a command changes nothing."))
    for e in bank.entries():
        ev = evidence.get(e.id) or FRESH
        if e.id not in touched and flags(e, ev)["suspect"] and ev["recalled_failed"] >= 2:
            ops.append(Op("remove", e.id))
    seen_texts: set[tuple[str, str]] = set()
    unique = []
    for op in ops:  # the same text twice in one consolidation is one addition
        key = (op.target, op.text.lower())
        if op.kind == "add" and key in seen_texts:
            continue
        seen_texts.add(key)
        unique.append(op)
    return unique
