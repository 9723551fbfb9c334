"""`ctx.chat_many` and the roles' function-calling capability on the method's side of the channel: what crosses is
JSON the cell reads back into the same messages and tools, the update note sits in front of the first user message,
and a method in its own process (`protocol.isolation: process`) knows which roles take tools as one in the cell's
process does."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from evoarena.api import Method, PracticeContext, TaskView
from evoarena.codec import to_plain
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.models import GenParams, Message, Tool, ToolCall
from evoarena.protocol.boundary import codec, method_child
from evoarena.protocol.boundary.client import StepContext, step_args
from evoarena.protocol.boundary.ops import ChatMany, Op, Practice

ROLES = {"solver": ("s", GenParams()), "proposer": ("p", GenParams(max_tokens=64))}
TASK = TaskView("t1", "train", "t1", "What is 1 + 1?")


class Recorder:
    """The method's end of a channel that keeps each request as the cell would receive it (JSON) and answers none."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def call(self, op: Op[Any]) -> Any:
        self.requests.append(json.loads(codec.call(op))["op"])
        return [None] * len(getattr(op, "conversations", ()))


def _ctx(tmp_path: Path, port: Recorder, **kw: Any) -> StepContext:
    return StepContext(port=port, harness=HarnessWorkspace(tmp_path / "h"), roles=ROLES, train=(TASK,), val=(),
                       rng=random.Random(0), step=0, **kw)


def test_chat_many_sends_messages_and_tools_as_json_with_the_note_in_front(tmp_path: Path) -> None:
    port = Recorder()
    ctx = _ctx(tmp_path, port, update_note="NOTE", function_calling=["proposer"])
    call = ToolCall("c1", "read", '{"path": "a"}')
    chat = [Message("system", "sys"), Message("user", "go"), Message("assistant", "", tool_calls=(call,)),
            Message("tool", "alpha", tool_call_id="c1"), Message("user", "again")]
    tool = Tool("read", "Read.", {"type": "object", "properties": {"path": {"type": "string"}}})
    assert ctx.chat_many("proposer", [chat], tools=[tool], tool_choice="auto", sample_indices=[3]) == [None]
    (args,) = port.requests
    assert args["op"] == "chat_many" and args["sample_indices"] == [3]
    assert [[m["role"], m["content"]] for m in args["conversations"][0]] == [
        ["system", "sys"], ["user", "NOTE\n\ngo"], ["assistant", ""], ["tool", "alpha"], ["user", "again"]]
    assert args["conversations"][0][2]["tool_calls"] == [to_plain(call)]
    assert args["conversations"][0][3]["tool_call_id"] == "c1"
    assert args["params"]["tools"] == [to_plain(tool)] and args["params"]["tool_choice"] == "auto"
    assert args["params"]["max_tokens"] == 64  # the role's defaults, as ask_many
    received = codec.read(json.dumps({"kind": "call", "op": args}).encode())  # as the cell reads it
    assert isinstance(received, codec.Call) and isinstance(received.op, ChatMany)
    assert received.op.params.tools == (tool,) and received.op.conversations[0][2].tool_calls == (call,)


class Probe(Method):
    """Records what its context says of each role."""

    name = "test-probe"
    seen: dict[str, bool] = {}

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        Probe.seen = {role: ctx.model(role).function_calling for role in ("solver", "proposer")}
        return None


def test_a_method_in_its_own_process_knows_which_roles_take_tools(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, Recorder(), function_calling=["proposer"])
    assert [ctx.model(r).function_calling for r in ("solver", "proposer")] == [False, True]
    command = codec.read(codec.call(Practice(step=step_args(ctx), task=TASK)))  # as the cell sends it down the pipe
    assert isinstance(command, codec.Call) and isinstance(command.op, Practice)
    child = method_child.ChildMethod(Probe(), ctx.harness, method_child.PipePort(None, None))  # type: ignore[arg-type]
    child.answer(command.op)
    assert Probe.seen == {"solver": False, "proposer": True}
