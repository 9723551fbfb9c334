"""ProTeGi's report view (results.json `views.protegi`, its report.html section), registered as `protegi`: per cell
of the method, each round's candidates (new rewrites and paraphrases, capped ones), the bandit's queries, the beam
kept and how many new candidates the label check flagged; the final beam's val scores and the pick. On a binary
task, for every cell of the run (the arms side by side), the test confusion matrix and F1 from its test attempts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from evoarena.api import view
from evoarena.api.views import ReportContext, TemplateView
from evoarena.store.queries import calls, episode_attempts, events


def confusion(attempts: list[tuple[str | None, bool]], labels: list[str]) -> dict[str, Any]:
    """The binary confusion matrix of test attempts read from (answer, passed) alone: a right answer's true label is
    the answer, a wrong one's is the other label (test references are not kept in the store). An answer that
    parsed to no label has no known true label and is counted apart (`unparsed`). Positive: the first label in
    sorted order. F1 of each label and their mean (macro)."""
    pos, neg = labels
    m: Counter[tuple[str, str]] = Counter()
    unparsed = 0
    for answer, passed in attempts:
        if answer not in labels:
            unparsed += 1
            continue
        truth = answer if passed else (neg if answer == pos else pos)
        m[(truth, answer)] += 1

    def f1(label: str) -> float:
        other = neg if label == pos else pos
        tp, fp, fn = m[(label, label)], m[(other, label)], m[(label, other)]
        return 2 * tp / (2 * tp + fp + fn) if tp or fp or fn else 0.0

    return {"positive": pos, "negative": neg, "matrix": [[m[(t, p)] for p in labels] for t in labels],
            "unparsed": unparsed, "n": len(attempts), "f1": f1(pos), "f1_negative": f1(neg),
            "macro_f1": (f1(pos) + f1(neg)) / 2}


def arms(ctx: ReportContext, proposed: dict[str, tuple[int, int]]) -> list[dict[str, Any]]:
    """The family's shared record per cell: feedback tokens (every role but the solver, probes left out) against
    forward tokens (the solver's), candidates proposed and kept in a beam, and on test the right→wrong and
    wrong→right rates against the `frozen` cell of the same seed and model (tasks frozen got right that the arm got
    wrong, over those frozen got right; and the converse)."""
    rows = ctx.run_cells()
    passed = {r.cell: {a.task_id: bool(a.passed) for a in episode_attempts(ctx.store, r.cell, "test")
                       if a.error is None} for r in rows}
    frozen = {(r.model, r.seed): r.cell for r in rows if r.method == "frozen"}
    out = []
    for r in rows:
        forward = feedback = 0
        for c in calls(ctx.store, cell=r.cell):
            if c.phase == "probe":
                continue
            n = c.input_tokens + c.output_tokens
            forward, feedback = (forward + n, feedback) if c.role == "solver" else (forward, feedback + n)
        row: dict[str, Any] = {"cell": r.cell, "condition": r.condition, "forward_tokens": forward,
                               "feedback_tokens": feedback, "proposed": proposed.get(r.cell, (0, 0))[0],
                               "kept": proposed.get(r.cell, (0, 0))[1], "right_to_wrong": None,
                               "wrong_to_right": None}
        base = frozen.get((r.model, r.seed))
        if base is not None and base != r.cell:
            b, m = passed[base], passed[r.cell]
            both = b.keys() & m.keys()
            right, wrong = [t for t in both if b[t]], [t for t in both if not b[t]]
            row["right_to_wrong"] = sum(not m[t] for t in right) / len(right) if right else None
            row["wrong_to_right"] = sum(m[t] for t in wrong) / len(wrong) if wrong else None
        out.append(row)
    return out


@view("protegi")
class ProtegiView(TemplateView):
    """ProTeGi: rounds, candidates, bandit queries, beams, label flips, the val pick; binary F1 per cell."""

    method = "protegi"
    template = ("evoarena.methods.protegi", "report_view.html.j2")

    def build(self, ctx: ReportContext) -> dict[str, Any] | None:
        cells: dict[str, dict[str, Any]] = {}
        labels: list[str] = []
        for e in events(ctx.store, ["protegi_round", "protegi_final", "protegi_labels"]):
            if e.cell is None:
                continue
            c = cells.setdefault(e.cell, {"cell": e.cell, "rounds": [], "final": None, "flips": 0})
            p = e.payload
            if e.kind == "protegi_labels":
                labels = labels or list(p["labels"])
            elif e.kind == "protegi_final":
                c["final"] = p
            else:
                new = [x for x in p["candidates"] if x["new"]]
                flips = sum(bool(x["flip"]) for x in new)
                c["flips"] += flips
                c["expansion"], c["allocation"] = p["expansion"], p["allocation"]
                c["rounds"].append({
                    "round": p["round"], "pool": len(p["candidates"]),
                    "rewrites": sum(x["kind"] == "rewrite" for x in new),
                    "paraphrases": sum(x["kind"] == "paraphrase" for x in new), "capped": len(p["capped"]),
                    "queries": sum(x["queries"] for x in p["candidates"]), "flips": flips,
                    "beam": [{"id": x["id"], "score": x["score"]} for i in p["beam"]
                             for x in p["candidates"] if x["id"] == i]})
        if not cells:
            return None
        proposed: dict[str, tuple[int, int]] = {}
        for e in events(ctx.store, ["protegi_round"]):
            if e.cell is not None:
                new = [x for x in e.payload["candidates"] if x["new"]]
                n, kept = proposed.get(e.cell, (0, 0))
                proposed[e.cell] = (n + len(new) + len(e.payload["capped"]),
                                    kept + sum(x["id"] in e.payload["beam"] for x in new))
        binary = []
        if len(labels) == 2:
            for row in ctx.run_cells():
                tests = [(a.answer, bool(a.passed)) for a in episode_attempts(ctx.store, row.cell, "test")
                         if a.error is None]
                if tests:
                    binary.append({"cell": row.cell, "condition": row.condition, **confusion(tests, labels)})
        return {"cells": [cells[k] for k in sorted(cells)], "labels": labels, "binary": binary,
                "arms": arms(ctx, proposed)}
