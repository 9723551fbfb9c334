"""The proposer's probes: the optimiser's own proposal signature, formatted and parsed by the adapter DSPy uses for it
(dspy/teleprompt/copro_optimizer.py `BasicGenerateInstruction`, dspy/propose/grounded_proposer.py
`generate_instruction_class`, dspy/teleprompt/gepa/instruction_proposal.py `ProposeInstruction` with JSONAdapter)."""

from __future__ import annotations

import json

import pytest

from evoarena.api import GENERIC_EXAMPLES, Reply
from evoarena.methods.lib_dspy.probes import proposal_probes
from evoarena.protocol.catalog import method_class

PROPOSING = ["dspy.COPRO", "dspy.GEPA", "dspy.MIPROv2"]


@pytest.mark.parametrize("name", PROPOSING)
def test_a_probe_is_the_optimisers_prompt_judged_by_its_parser(name: str) -> None:
    probes = method_class(name)().probes(GENERIC_EXAMPLES)
    assert [p.role for p in probes] == ["proposer"] * len(GENERIC_EXAMPLES)
    probe = probes[0]
    field = "new_instruction" if name == "dspy.GEPA" else "proposed_instruction"
    assert f"`{field}`" in probe.prompt and "Your output fields are:" in probe.prompt
    text = "Subtract what is given away and add what is bought."
    if name == "dspy.GEPA":
        good = json.dumps({field: text})
    else:
        extra = "\n\n[[ ## proposed_prefix_for_output_field ## ]]\nAnswer:" if name == "dspy.COPRO" else ""
        good = f"[[ ## {field} ## ]]\n{text}{extra}\n\n[[ ## completed ## ]]"
    assert probe.check(Reply(good)).usable
    assert not probe.check(Reply("Sure! Here is a better instruction.")).well_formed
    assert not probe.check(Reply(good, finish_reason="length")).well_formed


def test_simba_has_no_probe() -> None:
    assert method_class("dspy.SIMBA")().probes(GENERIC_EXAMPLES) == ()
    assert proposal_probes("SIMBA", GENERIC_EXAMPLES) == ()
