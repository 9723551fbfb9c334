"""The refiner's view of the recent steps, after the released `_format_trajectories_for_analysis`: per step the
solver's reply (its reasoning), the action, what came back, the score it gained, and the released warnings — an
action that changed nothing ("Issue") and an observation equal to the one two steps before ("Pattern: possible
loop")."""

from __future__ import annotations

from collections.abc import Sequence

from evoarena.methods.continual_harness.stuck import StepRec

REPLY_CHARS = 200  # the released trajectory summary cuts tool arguments and results at 300 characters


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_window(records: Sequence[StepRec], flags: Sequence[bool], score: float) -> str:
    """The steps `records` (with their stuck `flags`), numbered from 1 as the episode counts them; `score`: the
    episode's score after the last of them."""
    if not records:
        return "(no step played yet in this episode)"
    total = score - sum(r.gain for r in records)
    lines: list[str] = []
    for k, (rec, stuck) in enumerate(zip(records, flags, strict=True)):
        total += rec.gain
        lines.append(f"### Step {rec.index + 1}")
        if rec.reply.strip():
            lines.append(f"Reasoning: {_one_line(rec.reply, REPLY_CHARS)}")
        lines.append(f"Action: {rec.action or '(no action could be read from the reply)'}")
        lines.append("Result: " + (_one_line(rec.after, 400) if rec.after is not None else
                                   "(the episode ended after this action)"))
        if rec.gain:
            lines.append(f"Score: {rec.gain:+g} (total {total:g})")
        if stuck:
            lines.append("Issue: stuck (no progress from this action)")
        earlier = records[k - 2] if k >= 2 else None
        if earlier is not None and rec.before is not None and earlier.before == rec.before:
            lines.append("Pattern: same observation as 2 steps ago (possible loop)")
        lines.append("")
    return "\n".join(lines).strip()
