"""Function calling against a real server: `evoarena serve embedded-small --function-calling` (llama-cpp-python's
chatml-function-calling chat format, Qwen2.5-Coder-0.5B-Instruct) on 127.0.0.1. Marked `embedded` (`make
test-embedded`); grammar-constrained tool calls take the 0.5B model some seconds each on a small CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evoarena.harness import load_tree
from evoarena.methods.meta_harness.history import view
from evoarena.methods.meta_harness.tools import FUNCTIONS, run_function
from evoarena.models import GenParams, Message, ToolCall
from evoarena.models.openai_backend import OpenAIBackend
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ModelSpec, parse_spec
from evoarena.store import RunStore, conversation

pytestmark = pytest.mark.embedded
Served = tuple[str, str, Path]
READ = next(t for t in FUNCTIONS if t.name == "read")
LS = next(t for t in FUNCTIONS if t.name == "ls")


def printed_spec(served: Served) -> ModelSpec:
    """The `models:` entry `evoarena serve --function-calling` printed."""
    line = next(x for x in served[2].read_text(errors="replace").splitlines() if x.startswith("  served: {"))
    return ModelSpec.model_validate(yaml.safe_load(line)["served"])


def backend(served: Served, **update: object) -> OpenAIBackend:
    return OpenAIBackend(printed_spec(served).model_copy(update={"timeout_s": 300, **update}))


def test_the_printed_spec_says_the_server_offers_function_calling(llama_function_server: Served) -> None:
    spec = printed_spec(llama_function_server)
    assert spec.function_calling and spec.tool_results == "user" and spec.base_url == llama_function_server[0]


def test_a_forced_tool_call_comes_back_parsed_with_json_arguments(llama_function_server: Served) -> None:
    b = backend(llama_function_server)
    try:
        out = b.complete([Message("user", "Read the file summary.jsonl.")],
                         GenParams(max_tokens=48, tools=(READ, LS), tool_choice="read"))
    finally:
        b.close()
    (call,) = out.tool_calls
    assert call.name == "read" and out.finish_reason == "tool_calls" and call.id
    args = call.parsed()  # the server's grammar holds the arguments to the tool's schema
    assert set(args) == {"path"} and isinstance(args["path"], str)


def test_the_chat_format_drops_tool_messages_so_results_go_as_user_messages(llama_function_server: Served) -> None:
    """llama-cpp-python's chatml-function-calling template renders no `role: tool` message: a tool result's length
    does not change the prompt, unless it is sent as a user message (`tool_results: user`)."""
    call = ToolCall("call_1", "read", '{"path": "summary.jsonl"}')

    def prompt_tokens(b: OpenAIBackend, result: str) -> int:
        chat = [Message("user", "Read summary.jsonl."), Message("assistant", "", tool_calls=(call,)),
                Message("tool", result, tool_call_id="call_1")]
        return b.complete(chat, GenParams(max_tokens=1, tools=(READ,), tool_choice="none")).usage.input_tokens

    long = "The magic word is PERIWINKLE. " * 20
    as_tool, as_user = backend(llama_function_server, tool_results="tool"), backend(llama_function_server)
    try:
        assert prompt_tokens(as_tool, "") == prompt_tokens(as_tool, long)  # dropped
        assert prompt_tokens(as_user, long) > prompt_tokens(as_user, "") + 100
    finally:
        as_tool.close()
        as_user.close()


def test_a_meta_harness_proposer_turn_on_the_served_model(llama_function_server: Served, tmp_path: Path) -> None:
    """One iteration with the served 0.5B as proposer (functions mode, chosen by `auto` from its spec) and the
    scripted arith student as solver. The model may propose nothing usable; the ledger shows what was offered and
    what came back, and any tool call it made was answered with the history view's output."""
    spec = parse_spec({
        "name": "mh-functions-served",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 1, "n_test": 1}},
        "methods": [{"name": "meta_harness", "params": {
            "candidates_per_iteration": 1, "max_tool_calls": 1, "max_iterations": 1, "proposer_max_tokens": 96,
            "proposer_temperature": 0.0, "inline_chars": 600}}],
        "models": {"served": printed_spec(llama_function_server).model_copy(update={"timeout_s": 300}).dumped(),
                   "student": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "student", "proposer": "served"},
    })
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT id, error FROM calls WHERE role='proposer' ORDER BY id")
    assert rows and all(r["error"] is None for r in rows)
    convs = [c for r in rows if (c := conversation(store, r["id"])) is not None]
    first, last = convs[0], convs[-1]
    assert [t["name"] for t in first.call.params["tools"]] == ["ls", "read", "grep"]
    assert first.call.params["tool_choice"] == "auto" and first.response is not None
    if first.response.tool_calls:  # the tool turn called a tool: the final turn shows its output, offers no call
        assert len(convs) == 2 and last.call.params["tool_choice"] == "none" and last.messages is not None
        made = ToolCall(**first.response.tool_calls[0])
        (result,) = [m for m in last.messages if m.tool_call_id == made.id]
        seed = store.query_one("SELECT tree_blob, id FROM harness_versions WHERE manifest LIKE '%seed the history%'")
        assert seed is not None
        history = view(load_tree(store, seed["id"]), "full")
        assert result.role == "tool" and result.content == run_function(history, made)[0]
    else:  # it answered instead (llama-cpp-python's grammar leaves such an answer empty): the final turn asks
        assert last.call.params["tool_choice"] == "none" or first.response.text.strip()
    cell = store.cells()[0]
    entries = [json.loads(x) for x in load_tree(store, cell["current_version"])[
        "memory/meta_harness/summary.jsonl"].splitlines()]
    assert [e["iteration"] for e in entries] == [0, 1]  # the iteration finished: its proposal was recorded
