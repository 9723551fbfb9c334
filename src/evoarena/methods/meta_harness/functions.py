"""Meta-Harness's proposer through function calling (`tool_protocol: functions`): each proposal is a real
conversation — the prompt, the assistant's tool calls, a `tool` message with each call's output — in which the
proposer calls `ls`, `read` and `grep` (tools.FUNCTIONS) on the history view up to `max_tool_calls` times; then a
final turn, with the tools offered but `tool_choice: none`, asks for the FINAL JSON. All proposals advance one turn
at a time in one `ctx.chat_many`; every call, tool output and malformed call is in the ledger (the calls' messages)
and a malformed call is also rejected output (`ctx.reject`), never run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evoarena.api import PracticeContext, Reply
from evoarena.methods.jsonparse import first_json
from evoarena.methods.meta_harness.tools import FUNCTIONS, final_candidates, run_function
from evoarena.methods.prompting import render_prompt
from evoarena.models import Message


@dataclass
class _Proposal:
    """One proposal's conversation and the tool calls it has made."""

    messages: list[Message]
    used: int = 0
    reading: bool = True  # still in the tool phase
    outcome: tuple[str, dict[str, Any]] | None = field(default=None)


def propose_with_functions(ctx: PracticeContext, prompts: Sequence[str], history: Mapping[str, str], *,
                           sample_indices: Sequence[int], max_tool_calls: int, max_tokens: int,
                           temperature: float) -> list[tuple[str, dict[str, Any]]]:
    """(last reply, parsed proposal) per prompt; ("", {}) where a call failed or a reply was cut off."""
    props = [_Proposal([Message("user", p)], reading=max_tool_calls > 0) for p in prompts]

    def turn(live: list[int], *, final: bool) -> list[Reply | None]:
        return ctx.chat_many("proposer", [props[i].messages for i in live], tools=FUNCTIONS,
                             tool_choice="none" if final else "auto", reject_cut_off="proposal",
                             max_tokens=max_tokens, temperature=temperature,
                             sample_indices=[sample_indices[i] for i in live])

    while live := [i for i, p in enumerate(props) if p.reading and p.outcome is None]:
        for i, reply in zip(live, turn(live, final=False), strict=True):
            _take_tool_turn(ctx, props[i], reply, history, max_tool_calls)
    ending = [i for i, p in enumerate(props) if p.outcome is None]
    if ending:
        ask = render_prompt(__package__, "final")
        for i in ending:
            props[i].messages.append(Message("user", ask))
        for i, reply in zip(ending, turn(ending, final=True), strict=True):
            props[i].outcome = ("", {}) if reply is None else _parsed(reply.text)
    return [p.outcome or ("", {}) for p in props]


def _take_tool_turn(ctx: PracticeContext, prop: _Proposal, reply: Reply | None, history: Mapping[str, str],
                    limit: int) -> None:
    """Run the reply's tool calls (up to the limit; the rest are answered as not run) and add them and their
    outputs to the conversation. A reply without tool calls ends the tool phase: a proposal in it is taken, else
    the final turn asks for one."""
    if reply is None:
        prop.outcome = ("", {})
        return
    if reply.text or reply.tool_calls:  # an empty reply (no text, no call) is left out of the conversation
        prop.messages.append(Message("assistant", reply.text, tool_calls=reply.tool_calls))
    if not reply.tool_calls:
        found = first_json(final_candidates(reply.text), dict) if reply.text.strip() else None
        if found is not None:
            prop.outcome = (reply.text, found)
        prop.reading = False
        return
    for call in reply.tool_calls:
        if prop.used >= limit:
            output = f"(not run: the limit of {limit} tool calls is reached)"
        else:
            prop.used += 1
            output, malformed = run_function(history, call)
            if malformed is not None:
                ctx.reject("tool call", f"{call.name} {call.arguments}", malformed, part=True)
        prop.messages.append(Message("tool", output, tool_call_id=call.id))
    if prop.used >= limit:
        prop.reading = False


def _parsed(text: str) -> tuple[str, dict[str, Any]]:
    return text, first_json(final_candidates(text), dict) or {}
