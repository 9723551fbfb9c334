"""Native TextGrad's report view (results.json `views.textgrad_native`, a report.html section): per `textgrad` cell,
its variant (pipeline, update, feedback), how many candidate updates were kept, reverted by validation, rejected (no
`<IMPROVED_VARIABLE>` span) or got no reply, the kept prompt's val curve, and the right→wrong rate: val items right
under the parent prompt and wrong under the candidate, over the items both were graded on, summed over steps."""

from __future__ import annotations

from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.store.queries import calls, cells, events


def matched_k(store: Any, cell: str) -> tuple[int, int, int | None]:
    """(optimisation tokens, test tokens, k): the cell's practice-phase tokens (every critique, update and rollout),
    its test-phase tokens, and the vote's k that spends as much on the test split — 1 + optimisation ÷ test, rounded
    (TextGrad answers each test item once, like one vote sample; its optimisation is the extra)."""
    rows = calls(store, cell=cell, errors=False)
    practice = sum(c.input_tokens + c.output_tokens for c in rows if c.phase == "practice")
    test = sum(c.input_tokens + c.output_tokens for c in rows if c.phase == "test")
    return practice, test, (1 + round(practice / test) if test else None)

METHOD = "textgrad"
KINDS = ["textgrad_native_seed", "textgrad_native_step", "textgrad_native_no_reply", "textgrad_native_vote",
         "rejected_output"]


@view("textgrad_native")
class NativeTextGradView(TemplateView):
    """TextGrad (native): the fate of each candidate update, the val curve and the right→wrong rate."""

    method = METHOD
    template = ("evoarena.methods.textgrad", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        rows = {c.cell: _row(c.cell, c.condition, c.seed) for c in cells(ctx.store) if c.method == METHOD}
        if not rows:
            return None
        for e in events(ctx.store, KINDS):
            if (e.cell or "") in rows:
                _count(rows[e.cell or ""], e.kind, e.payload)
        for row in rows.values():
            row["rate"] = row["right_to_wrong"] / row["graded"] if row["graded"] else None
            row["optimisation_tokens"], row["test_tokens"], row["matched_k"] = matched_k(ctx.store, row["cell"])
        return {"cells": list(rows.values())}


def _row(cell: str, condition: str, seed: int) -> dict[str, Any]:
    counts = dict.fromkeys(("steps", "kept", "reverted", "rejected", "no_reply", "right_to_wrong", "wrong_to_right",
                            "graded"), 0)
    return {"cell": cell, "condition": condition, "seed": seed, "val": [], "vote": None, **counts}


def _count(row: dict[str, Any], kind: str, p: dict[str, Any]) -> None:
    """One event into its cell's row."""
    if kind == "textgrad_native_vote":
        row["vote"] = {"k": p["k"], "single": p["val_single"], "vote": p["val_vote"]}
        return
    if kind == "textgrad_native_seed":
        row["val"].insert(0, p["val"])
        return
    row["steps"] += 1
    if kind != "textgrad_native_step":
        row["rejected" if kind == "rejected_output" else "no_reply"] += 1
        return
    row["kept" if p.get("kept") else "reverted"] += 1
    if p.get("val") is not None:
        row["val"].append(p["val"] if p.get("kept") else p["previous"])
    for key in ("right_to_wrong", "wrong_to_right", "graded"):
        row[key] += int(p.get(key) or 0)
