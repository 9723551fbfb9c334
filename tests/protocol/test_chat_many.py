"""`ctx.chat_many` and the roles' function-calling capability on the method's side of the channel: what crosses is
plain JSON, the update note sits in front of the first user message, and a method in its own process
(`protocol.isolation: process`) knows which roles take tools as one in the cell's process does."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path
from typing import Any

from evoarena.api import Method, PracticeContext, TaskView
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.models import GenParams, Message, Tool, ToolCall
from evoarena.protocol.boundary import method_child
from evoarena.protocol.boundary.client import StepContext, step_args

ROLES = {"solver": ("s", GenParams()), "proposer": ("p", GenParams(max_tokens=64))}
TASK = TaskView("t1", "train", "t1", "What is 1 + 1?")


class Recorder:
    """The method's end of a channel that keeps each request as the cell would receive it (JSON) and answers none."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def call(self, op: str, **args: Any) -> Any:
        self.requests.append((op, json.loads(json.dumps(args))))
        return [None] * len(args.get("conversations", []))


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
    ((op, args),) = port.requests
    assert op == "chat_many" and args["sample_indices"] == [3]
    assert args["conversations"] == [[["system", "sys"], ["user", "NOTE\n\ngo"],
                                      ["assistant", "", {"tool_calls": [call.as_dict()]}],
                                      ["tool", "alpha", {"tool_call_id": "c1"}], ["user", "again"]]]
    assert args["params"]["tools"] == [tool.as_dict()] and args["params"]["tool_choice"] == "auto"
    assert args["params"]["max_tokens"] == 64  # the role's defaults, as ask_many
    assert GenParams.from_dict(args["params"]).tools == (tool,)


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
    step = pickle.loads(pickle.dumps(step_args(ctx)))  # as the cell sends it down the pipe
    method_child._run(Probe(), ctx.harness, method_child.PipePort(None, None),  # type: ignore[arg-type]
                      "practice", [step, TASK])
    assert Probe.seen == {"solver": False, "proposer": True}
