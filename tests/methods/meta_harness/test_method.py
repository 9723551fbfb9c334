"""Meta-Harness with scripted models (evidence: mechanism): the proposer reads the history through tools in the
access mode's view, proposals are kept pending, checked (interface, one-task smoke test) and evaluated on the search
tasks, the history records them, the live harness is the frontier's most accurate candidate."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from own_process import own_process

from evoarena.api import policy
from evoarena.harness import load_tree
from evoarena.harness.state import record_line
from evoarena.methods.meta_harness.history import ROOT, SUMMARY, SummaryEntry, read_summary, view
from evoarena.methods.meta_harness.tools import ToolCall, grep, ls, parse_call, read, run_tool
from evoarena.models import GenParams, Message
from evoarena.protocol.catalog import build_method
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore, conversation

JOB = "Your job for this candidate:"


def _final(files: dict[str, str]) -> str:
    return "FINAL:\n```json\n" + json.dumps({"name": "n", "hypothesis": "rules help", "changes": "added rules",
                                             "expected_efficiency": "more characters", "files": files}) + "\n```"


@policy("test-mh")
def proposer(messages: Sequence[Message], params: GenParams) -> str:
    """Exploit: read the summary, then add every family's rule as a note. Explore: an empty system prompt (refused by
    the interface check) or a harness that makes the solver answer nothing (caught by the smoke test)."""
    text = messages[-1].content
    if JOB not in text:
        if any("NO ANSWERS" in m.content for m in messages):
            return "I will not answer."
        return arith_student(messages, params)
    if "[tool output]" not in text:
        return "Let me look.\nTOOL: read summary.jsonl"
    if "exploit" in text.split(JOB, 1)[1].split("\n", 1)[0]:
        return _final({"memory/rules.md": "\n".join(RULES.values())})
    if "smoke test failed" in text:  # the summary it read shows the last exploration failed its smoke test
        return _final({"system.md": ""})
    return _final({"system.md": "NO ANSWERS"})


def run(tmp_path: Path, make_spec: Any, **params: Any) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(methods=[{"name": "meta_harness", "params": params}],
                     models={"s": {"backend": "scripted", "model": "test-mh"}}, roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


def summary(tree: dict[str, str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in tree[ROOT + "summary.jsonl"].splitlines()]


def test_the_search_keeps_a_history_and_adopts_the_frontiers_best(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, candidates_per_iteration=2)
    entries = summary(tree)
    assert entries[0]["candidate"] == "c0" and entries[0]["outcome"] == "evaluated"
    outcomes = [e["outcome"] for e in entries[1:]]
    assert "evaluated" in outcomes
    assert any(o.startswith("smoke test failed") for o in outcomes)
    assert any(o.startswith("interface check failed") for o in outcomes)
    best = min(json.loads(tree[ROOT + "frontier.json"]), key=lambda r: (-r["accuracy"], r["context_chars"]))
    c0 = json.loads(tree[ROOT + "candidates/c0/scores.json"])["accuracy"]
    assert best["accuracy"] > c0 and tree.get("memory/rules.md") == "\n".join(RULES.values())
    assert ROOT + "pending.json" not in tree  # cleared once the proposals were evaluated
    prompts = [r["request_blob"] for r in store.query("SELECT request_blob FROM calls WHERE role='proposer'")]
    shown = [m.content for d in prompts for m in store.get_request(d)]
    assert any("[tool output]" in p and '"candidate": "c0"' in p for p in shown)  # the summary it read came back
    rejected = [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='rejected_output'")]
    assert any(r["what"] == "candidate" and "empty system.md" in r["reason"] for r in rejected)


def test_in_scores_mode_the_summary_and_traces_are_out_of_reach(tmp_path: Path, make_spec: Any) -> None:
    store, tree = run(tmp_path, make_spec, access="scores")
    prompts = [m.content for r in store.query("SELECT request_blob FROM calls WHERE role='proposer'")
               for m in store.get_request(r["request_blob"])]
    assert any("no file 'summary.jsonl' in the history you can see" in p for p in prompts)


def test_views_by_access_mode() -> None:
    tree = {ROOT + "summary.jsonl": "s", ROOT + "frontier.json": "f", ROOT + "candidates/c0/scores.json": "{}",
            ROOT + "candidates/c0/traces.md": "t", ROOT + "candidates/c0/files/system.md": "x", "system.md": "live"}
    assert sorted(view(tree, "scores")) == ["candidates/c0/scores.json", "frontier.json"]
    assert sorted(view(tree, "scores+summary")) == ["candidates/c0/scores.json", "frontier.json", "summary.jsonl"]
    assert len(view(tree, "full")) == 5 and "system.md" not in view(tree, "full")
    with pytest.raises(ValueError, match="access mode"):
        view(tree, "everything")


def test_tools_and_their_protocol() -> None:
    files = {"a/x.md": "alpha\nBeta", "a/y.md": "gamma", "b.md": "beta two"}
    assert parse_call("hmm\nTOOL: read a/x.md\n") == ToolCall("read", "a/x.md")
    assert parse_call("FINAL:\n{}\nTOOL: ls") is None and parse_call("no tools") is None
    assert ls(files, "a").splitlines() == ["a/x.md  (10 chars)", "a/y.md  (5 chars)"]
    assert read(files, "/b.md") == "beta two" and "no file" in read(files, "c.md")
    assert grep(files, "beta").splitlines() == ["a/x.md:2: Beta", "b.md:1: beta two"]
    assert grep(files, "beta a").splitlines() == ["a/x.md:2: Beta"] and "bad pattern" in grep(files, "(")
    assert run_tool({"big": "x" * 5000}, ToolCall("read", "big")).endswith("[... clipped at 4000 characters]")


def test_an_unknown_access_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="methods.meta_harness.params.access"):
        build_method("meta_harness", {"access": "all"})


def test_iterations_stop_at_max_iterations(tmp_path: Path, make_spec: Any) -> None:
    _, tree = run(tmp_path, make_spec, max_iterations=2)
    assert {e["iteration"] for e in summary(tree)} == {0, 1, 2}


def test_a_final_object_followed_by_prose_is_read() -> None:
    from evoarena.methods.jsonparse import first_json, leading_object
    from evoarena.methods.meta_harness.method import _final_candidates

    reply = 'FINAL: {"name": "n", "files": {"system.md": "x {y}"}}\n\nThis harness adds {braces} in prose.'
    assert first_json(_final_candidates(reply), dict) == {"name": "n", "files": {"system.md": "x {y}"}}
    assert leading_object("no object here") is None and leading_object("{broken") is None


def test_every_proposal_has_an_id_of_its_own(tmp_path: Path, make_spec: Any) -> None:
    _, tree = run(tmp_path, make_spec, candidates_per_iteration=2)
    ids = [e["candidate"] for e in summary(tree)]
    assert len(ids) == len(set(ids)) and ids[0] == "c0"


def test_the_compressed_history_in_the_prompt_follows_the_mode() -> None:
    from evoarena.methods.meta_harness.method import inline_history

    scores = json.dumps({"accuracy": 0.5, "context_chars": 10, "tasks": {"t1": 1.0, "t2": 0.0}})
    tree = {ROOT + "summary.jsonl": '{"candidate": "c0"}\n{"candidate": "c1"}\n', ROOT + "frontier.json": "[]",
            ROOT + "candidates/c0/scores.json": scores, ROOT + "candidates/c0/traces.md": "SECRET TRACE"}
    only_scores = inline_history(view(tree, "scores"), 4000)
    assert "c0: accuracy 0.500, 10 characters" in only_scores and "summary:" not in only_scores
    with_summary = inline_history(view(tree, "scores+summary"), 4000)
    assert with_summary.index('summary: {"candidate": "c1"}') < with_summary.index('summary: {"candidate": "c0"}')
    assert "SECRET TRACE" not in inline_history(view(tree, "full"), 4000)  # traces are read through the tools
    assert len(inline_history(view(tree, "full"), 60)) <= 60


RULES_PROGRAM = """
RULES = {rules!r}
def build_messages(request):
    system = request["files"]["system.md"] + "\\n" + "\\n".join(RULES)
    return [{{"role": "system", "content": system}}, {{"role": "user", "content": request["task"]}}]
"""


@policy("test-mh-program")
def program_proposer(messages: Sequence[Message], params: GenParams) -> str:
    """Exploit: a harness program that writes every family's rule into the system message. Explore: a program that
    does not compile (interface check) or one that raises on every task (smoke test)."""
    text = messages[-1].content
    if JOB not in text:
        return arith_student(messages, params)
    assert "harness.py" in text  # the prompt offers programs only with `programs`
    if "exploit" in text.split(JOB, 1)[1].split("\n", 1)[0]:
        return _final({"harness.py": RULES_PROGRAM.format(rules=list(RULES.values()))})
    if "smoke test failed" in text:
        return _final({"harness.py": "def build_messages(request:\n"})
    return _final({"harness.py": "def build_messages(request):\n    raise RuntimeError('broken harness')\n"})


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_harness_programs_are_checked_smoke_tested_and_run_in_the_sandbox(
        tmp_path: Path, make_spec: Any, isolation: str) -> None:
    spec = make_spec(methods=[{"name": "meta_harness", "params": {"programs": True, "max_iterations": 2}}],
                     models={"s": {"backend": "scripted", "model": "test-mh-program"}},
                     roles={"solver": "s", "proposer": "s"},
                     protocol=own_process() if isolation == "process" else {"isolation": isolation})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    tree = load_tree(store, store.cells()[0]["current_version"])
    entries = summary(tree)
    outcomes = [e["outcome"] for e in entries[1:]]
    assert any(o.startswith("smoke test failed") for o in outcomes)
    assert any(o.startswith("interface check failed") and "does not compile" in o for o in outcomes)
    assert "harness.py" in tree  # the program won: the frontier's most accurate candidate
    best = min(json.loads(tree[ROOT + "frontier.json"]), key=lambda r: (-r["accuracy"], r["context_chars"]))
    c0 = json.loads(tree[ROOT + "candidates/c0/scores.json"])["accuracy"]
    assert best["accuracy"] > c0
    # the test phase ran the program: its system message holds the rules, built in the sandbox per task
    rows = store.query("SELECT c.request_blob FROM attempts a JOIN calls c ON c.id = a.call_id "
                       "WHERE a.phase = 'test'")
    assert rows and all(list(RULES.values())[0] in store.get_request(r["request_blob"])[0].content for r in rows)
    # the broken program's smoke test failed as a parse error, with no solver call for it
    errors = [r["parse_error"] for r in store.query("SELECT parse_error FROM attempts WHERE parse_error IS NOT NULL")]
    assert any("harness program" in e and "broken harness" in e for e in errors)


def test_programs_are_refused_unless_enabled() -> None:
    mh = build_method("meta_harness", {})
    files, why = mh._interface({"files": {"harness.py": "def build_messages(r):\n    return []\n"}})
    assert files is None and "programs are off" in why
# --- tool_protocol: functions (the proposer calls its tools through function calling) ---------------------------


def run_functions(tmp_path: Path, make_spec: Any, **params: Any) -> tuple[RunStore, dict[str, str]]:
    spec = make_spec(methods=[{"name": "meta_harness", "params": {"max_iterations": 1, **params}}],
                     models={"s": {"backend": "scripted", "model": "arith-tool-proposer"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    return store, load_tree(store, store.cells()[0]["current_version"])


@pytest.mark.parametrize("protocol", ["functions", "auto"])  # auto: the policy takes tools, so functions
def test_in_functions_mode_the_proposer_calls_tools_and_their_outputs_come_back(
        tmp_path: Path, make_spec: Any, protocol: str) -> None:
    store, tree = run_functions(tmp_path, make_spec, tool_protocol=protocol)
    rows = store.query("SELECT id, params FROM calls WHERE role='proposer' ORDER BY id")
    convs = [conversation(store, r["id"]) for r in rows]
    sent = [json.loads(r["params"]) for r in rows]
    assert all([t["name"] for t in p["tools"]] == ["ls", "read", "grep"] for p in sent)
    # two slots, advanced together: their tool calls, their replies without one (done reading), the final turn
    assert [p["tool_choice"] for p in sent] == ["auto", "auto", "auto", "auto", "none", "none"]
    calls = [c for conv in convs if conv and conv.response and conv.response.tool_calls
             for c in conv.response.tool_calls]
    assert {"id": "call_read", "name": "read", "arguments": '{"path": "summary.jsonl"}'} in calls
    final = next(c for c in convs if c and c.call.params["tool_choice"] == "none" and c.messages
                 and any(m.tool_call_id == "call_read" for m in c.messages))
    assert final.messages is not None
    assistant = next(m for m in final.messages if m.tool_calls)
    assert [c["name"] for c in assistant.tool_calls or []] == ["ls", "read"]
    read = next(m for m in final.messages if m.tool_call_id == "call_read")
    assert read.role == "tool" and '"candidate": "c0"' in read.content  # the summary from the history view
    listed = next(m for m in final.messages if m.tool_call_id == "call_ls")
    assert "candidates/c0/scores.json" in listed.content
    assert "TOOL:" not in final.messages[0].content  # the functions prompt does not describe the text protocol
    entries = summary(tree)
    evaluated = [e for e in entries if e["iteration"] == 1 and e["outcome"] == "evaluated"]
    assert evaluated and "shows 1 candidate(s)" in evaluated[0]["hypothesis"]
    assert tree.get("memory/rules.md") == "\n".join(RULES.values())  # the candidate was evaluated and adopted
    rejected = [json.loads(r["payload"]) for r in store.query(
        "SELECT payload FROM events WHERE kind='rejected_output'")]
    assert [r["what"] for r in rejected] == ["tool call"] and "not a JSON object" in rejected[0]["reason"]
    explore = next(c for c in convs if c and c.messages and any(m.tool_call_id == "call_bad" for m in c.messages))
    assert explore.messages is not None
    bad = next(m for m in explore.messages if m.tool_call_id == "call_bad")
    assert bad.content.startswith("(error: read: arguments are not a JSON object")  # answered, never run


def test_the_tool_limit_holds_in_functions_mode(tmp_path: Path, make_spec: Any) -> None:
    store, _ = run_functions(tmp_path, make_spec, max_tool_calls=1, candidates_per_iteration=1)
    (conv,) = [c for r in store.query("SELECT id FROM calls WHERE role='proposer' ORDER BY id DESC LIMIT 1")
               if (c := conversation(store, r["id"])) is not None]
    assert conv.messages is not None
    outputs = {m.tool_call_id: m.content for m in conv.messages if m.role == "tool"}
    assert outputs["call_read"] == "(not run: the limit of 1 tool calls is reached)"
    assert "candidates/c0" in outputs["call_ls"]


def test_an_unknown_tool_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="methods.meta_harness.params.tool_protocol"):
        build_method("meta_harness", {"tool_protocol": "json"})


def test_functions_mode_needs_a_proposer_that_takes_tools(tmp_path: Path, make_spec: Any) -> None:
    """`test-mh` is not marked `calls_tools`: `auto` gives it the text protocol (the tests above), `functions` is
    refused with the reason before any proposer call."""
    with pytest.raises(ValueError, match="tool_protocol: functions, but the proposer's model does not offer"):
        run(tmp_path, make_spec, tool_protocol="functions")
    assert RunStore(tmp_path / "run").query("SELECT id FROM calls WHERE role='proposer'") == []


def test_a_summary_line_holds_the_keys_its_outcome_set() -> None:
    seed = SummaryEntry(iteration=0, candidate="c0", parent=None, accuracy=0.5, delta_vs_best=0.5, context_chars=10,
                        outcome="evaluated", name="seed")
    refused = SummaryEntry(iteration=1, candidate="c1", outcome="interface check failed: x", name="n")
    assert '"parent": null' in record_line(seed) and "parent" not in record_line(refused)
    text = record_line(seed) + record_line(refused)
    assert "".join(record_line(e) for e in read_summary({SUMMARY: text})) == text  # read back, the same bytes
