"""EvoTest's role probe: can the evolver model write a child configuration the method keeps? The probe's episode is
made from a fixed example (its task as the goal, the wrong output as the last command, the feedback as the outcome);
the reply is judged by `parse_reply`, and it is usable when it keeps a guiding prompt other than the parent's."""

from __future__ import annotations

from evoarena.api import ProbeExample, Reply, Verdict
from evoarena.api.probe import judged, refused
from evoarena.methods.evotest.reply import ReplyError, parse_reply


def probe_history(ex: ProbeExample) -> str:
    """A one-step game history for the evolver, from a probe example."""
    return f"Goal: {ex.task.strip()}\n> {ex.output.strip()}\n{ex.feedback.strip()}\n\nOutcome: score 0, not won"


def check_evolution(scope: str, parent_guide: str, reply: Reply) -> Verdict:
    """Well formed when the parser keeps some part of the reply; usable when a new guiding prompt is among them."""
    if reply.cut_off:  # the method rejects a cut-off evolver reply (`reject_cut_off`)
        return refused("the reply was cut off at max_tokens")
    try:
        evolved = parse_reply(reply.text, scope)
    except ReplyError as err:
        return refused(str(err))
    new_prompt = evolved.prompt is not None and evolved.prompt.strip() != parent_guide.strip()
    return judged(new_prompt, "the reply keeps no new guiding prompt")
