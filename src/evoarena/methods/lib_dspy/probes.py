"""Role probes for DSPy's prompt model: the optimiser's own proposal signature, formatted by the adapter DSPy uses for
it (ChatAdapter; JSONAdapter for GEPA's reflection) from a probe example, sent as one user message (the system
and user texts joined), and judged by that adapter's own parser. SIMBA's advice signature is not probed."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from evoarena.api import Probe, ProbeExample, Reply, Verdict
from evoarena.api.probe import judged, mentions, non_answer, refused
from evoarena.methods.lib_dspy.bridge import load_dspy, new_program, predictor

Inputs = Callable[[str, Sequence[ProbeExample]], dict[str, Any]]


def _mipro(dspy: Any) -> tuple[Any, Any, Inputs, str]:
    from dspy.propose.grounded_proposer import generate_instruction_class

    sig = generate_instruction_class(use_dataset_summary=False, program_aware=False, use_task_demos=True,
                                     use_instruct_history=False, use_tip=False).signature

    def inputs(base: str, exs: Sequence[ProbeExample]) -> dict[str, Any]:
        demos = "\n\n".join(f"Question: {ex.task}\nAnswer: {ex.output.strip()}" for ex in exs)
        return {"task_demos": demos, "basic_instruction": base}

    return sig, dspy.ChatAdapter(use_json_adapter_fallback=False), inputs, "proposed_instruction"


def _copro(dspy: Any) -> tuple[Any, Any, Inputs, str]:
    from dspy.teleprompt.copro_optimizer import BasicGenerateInstruction

    return (BasicGenerateInstruction, dspy.ChatAdapter(use_json_adapter_fallback=False),
            lambda base, exs: {"basic_instruction": base}, "proposed_instruction")


def _gepa(dspy: Any) -> tuple[Any, Any, Inputs, str]:
    from dspy.teleprompt.gepa.instruction_proposal import ProposeInstruction

    def inputs(base: str, exs: Sequence[ProbeExample]) -> dict[str, Any]:
        return {"current_instruction": base, "examples_with_feedback": [
            {"Inputs": {"question": ex.task}, "Generated Outputs": {"answer": ex.output.strip()},
             "Feedback": ex.feedback} for ex in exs]}

    return ProposeInstruction, dspy.JSONAdapter(), inputs, "new_instruction"


SIGNATURES: Mapping[str, Callable[[Any], tuple[Any, Any, Inputs, str]]] = {
    "MIPROv2": _mipro, "COPRO": _copro, "GEPA": _gepa}
"""The proposal signature each optimiser sends its prompt model (MIPROv2's GroundedProposer with task demos only;
COPRO's first-round `BasicGenerateInstruction`; GEPA's `ProposeInstruction`)."""


def _check(signature: Any, adapter: Any, field: str, base: str, sources: list[str], known: list[str],
           reply: Reply) -> Verdict:
    """Adopted when the adapter parses the reply into the signature's fields; usable when the proposal is new, no
    request for input, and (for GEPA, which is shown feedback) reads the feedback."""
    from dspy.utils.exceptions import AdapterParseError

    if reply.cut_off:
        return refused("cut off at max_tokens")
    try:
        proposal = str(adapter.parse(signature, reply.text)[field]).strip()
    except (AdapterParseError, ValueError, json.JSONDecodeError) as err:
        return refused(f"DSPy could not parse it: {str(err).splitlines()[0][:120]}")
    if not proposal or proposal == base or non_answer(proposal):
        return judged(False, "no new instruction")
    return judged(not sources or mentions(proposal, sources, known), "the proposal ignores the feedback")


def proposal_probes(optimiser: str, examples: Sequence[ProbeExample]) -> tuple[Probe, ...]:
    """One probe per example for the optimiser's proposal signature (none for an optimiser without one here)."""
    build = SIGNATURES.get(optimiser)
    if build is None:
        return ()
    dspy = load_dspy()
    signature, adapter, inputs, field = build(dspy)
    base = predictor(new_program("Predict")).signature.instructions
    probes = []
    for ex in examples:
        sent = adapter.format(signature, [], inputs(base, [ex]))
        prompt = "\n\n".join(m["content"] for m in sent)
        sources = [ex.feedback] if optimiser == "GEPA" else []
        probes.append(Probe(f"propose/{ex.id}", "proposer", prompt,
                            partial(_check, signature, adapter, field, base, sources, [ex.task, ex.output])))
    return tuple(probes)
