"""`arith-tool-proposer`: a Meta-Harness proposer that reads the search history through function calling, and the
arith student as solver, for mechanism tests of `tool_protocol: functions` (evidence: mechanism).

Offered tools (a proposer turn), it calls them once: the exploit slot `ls` of the candidates and `read` of the
summary, the explore slot a `grep` and a `read` whose arguments are cut off (not JSON: malformed output, rejected).
Then it stops calling tools (an empty reply, as llama-cpp-python's chatml-function-calling gives when the model
chooses to answer), and in the final turn (`tool_choice: none`) proposes every arith family's rule as a note, saying
how many candidates the summary it read showed. Without tools it is the arith student."""

from __future__ import annotations

import json
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models import GenParams, Message, PolicyReply, ToolCall, calls_tools
from evoarena.scripted.arith import RULES, arith_student


@policy("arith-tool-proposer")
@calls_tools
def arith_tool_proposer(messages: Sequence[Message], params: GenParams) -> str | PolicyReply:
    if not params.tools:
        return arith_student(messages, params)
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    if params.tool_choice != "none":
        if results:
            return PolicyReply("")  # read enough
        if "explore:" in messages[0].content:
            return PolicyReply("Searching the history.", (
                ToolCall("call_grep", "grep", json.dumps({"pattern": "accuracy"})),
                ToolCall("call_bad", "read", '{"path": "summary.js'),
            ))
        return PolicyReply("Reading the history.", (
            ToolCall("call_ls", "ls", json.dumps({"directory": "candidates"})),
            ToolCall("call_read", "read", json.dumps({"path": "summary.jsonl"})),
        ))
    summary = results.get("call_read", "")
    seen = sum(1 for line in summary.splitlines() if line.startswith("{"))
    proposal = {"name": "rules", "hypothesis": f"the summary I read shows {seen} candidate(s), none with rules",
                "changes": "a note with every family's rule", "expected_efficiency": "more characters",
                "files": {"memory/rules.md": "\n".join(RULES.values())}}
    return "FINAL:\n```json\n" + json.dumps(proposal) + "\n```"
