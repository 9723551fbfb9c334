"""Update quality: per condition × model × update role, the replies the role gave during practice (all seeds) and
what became of them — usable, or rejected as an echo, a duplicate of its parent, repeated items, a refusal or
request for input, or malformed (the method's parser refused it) — from the ledger and the `rejected_output` events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from evoarena.report.records import CallRecord
from evoarena.report.results_record import UpdateQuality
from evoarena.report.snapshot import RunSnapshot

KINDS = ("echo", "duplicate", "repeated", "refused", "malformed")
"""The kinds of a rejected reply (the methods' shared reply check and `malformed`), in the order shown."""
SOLVER = "solver"
NO_ROLE = "(no call yet)"
"""The role of a rejection made before the step's first model call."""


def update_quality(snap: RunSnapshot, calls: Sequence[CallRecord]) -> list[UpdateQuality]:
    """One row per condition × model × update role that replied or was rejected during practice, in spec order
    then by role. `usable` counts the replies no whole-reply rejection refused; `parts` the rejections of a part of
    a reply (an operation, a change), which leave the rest of it usable."""
    replies: Counter[tuple[str, str, str]] = Counter()
    for c in calls:
        if c.phase == "practice" and c.role != SOLVER and c.error is None and c.condition and c.model:
            replies[(c.condition, c.model, c.role)] += 1
    kinds: Counter[tuple[str, str, str, str]] = Counter()
    wholes: Counter[tuple[str, str, str]] = Counter()
    parts: Counter[tuple[str, str, str]] = Counter()
    cells = snap.by_cell
    for e in snap.rejections:
        cell = cells.get(e.cell or "")
        if cell is None:
            continue
        key = (cell.condition, cell.model, str(e.payload.get("role") or NO_ROLE))
        kind = str(e.payload.get("kind") or "malformed")
        kinds[(*key, kind if kind in KINDS else "malformed")] += 1
        if e.payload.get("part"):
            parts[key] += 1
        else:
            wholes[key] += 1
    order = {c: i for i, c in enumerate(snap.conditions)}
    keys = sorted(set(replies) | set(wholes) | set(parts), key=lambda k: (order.get(k[0], len(order)), k))
    return [UpdateQuality(condition=c, model=m, role=r, replies=replies[(c, m, r)],
                          usable=max(0, replies[(c, m, r)] - wholes[(c, m, r)]),
                          parts=parts[(c, m, r)], **{k: kinds[(c, m, r, k)] for k in KINDS})
            for c, m, r in keys]
