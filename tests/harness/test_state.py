"""A method's typed state through the workspace: one JSON form, read back equal; bad state is a one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from evoarena.harness import HarnessStateError, HarnessWorkspace
from evoarena.harness.state import Absent, Given, record_line


class Node(BaseModel):
    id: str
    score: float | None = None
    children: list[str] = []


class Pool(BaseModel):
    nodes: dict[str, Node] = {}
    next_id: int = 0


def test_state_round_trips_in_the_one_json_form(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    pool = Pool(nodes={"b": Node(id="b", score=0.5), "a": Node(id="a", children=["b"])}, next_id=2)
    ws.save_state("state/pool.json", pool)
    text = ws.read("state/pool.json")
    assert text == json.dumps(pool.model_dump(), indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    assert text.index('"a"') < text.index('"b"')  # sorted keys: the same state, the same bytes
    assert ws.load_state("state/pool.json", Pool) == pool


def test_absent_state_gives_the_default_or_says_so(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    assert ws.load_state("none.json", Pool, default=Pool()) == Pool()
    with pytest.raises(FileNotFoundError):
        ws.load_state("none.json", Pool)


def test_malformed_state_is_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    ws.write("pool.json", '{"nodes": {"a": {"id": 3}}, "next_id": 0}')
    with pytest.raises(HarnessStateError) as err:
        ws.load_state("pool.json", Pool)
    msg = str(err.value)
    assert "\n" not in msg and "'pool.json'" in msg and "nodes.a.id" in msg


def test_records_append_and_read_back_with_bad_lines_named(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    assert ws.load_records("log.jsonl", Node) == []
    ws.append_record("log.jsonl", Node(id="x", score=1.0))
    ws.append_record("log.jsonl", Node(id="y"))
    assert [n.id for n in ws.load_records("log.jsonl", Node)] == ["x", "y"]
    assert ws.read("log.jsonl").splitlines()[0] == '{"children": [], "id": "x", "score": 1.0}'
    ws.append("log.jsonl", "not json\n")
    with pytest.raises(HarnessStateError, match="line 3"):
        ws.load_records("log.jsonl", Node)


class Sparse(BaseModel):
    id: str
    note: Absent[str] = None


class Change(Given):
    op: str
    evicted: str | None = None


def test_an_absent_key_is_left_out_until_it_is_set(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    ws.save_state("s.json", Sparse(id="a"))
    assert ws.read("s.json") == '{\n "id": "a"\n}\n' and ws.load_state("s.json", Sparse) == Sparse(id="a")
    ws.save_state("s.json", Sparse(id="a", note="n"))
    assert json.loads(ws.read("s.json")) == {"id": "a", "note": "n"}


def test_a_given_record_keeps_exactly_the_keys_it_was_given(tmp_path: Path) -> None:
    ws = HarnessWorkspace(tmp_path)
    ws.append_record("log.jsonl", Change(op="add", evicted=None))
    ws.append_record("log.jsonl", Change(op="remove"))
    text = ws.read("log.jsonl")
    assert text == '{"evicted": null, "op": "add"}\n{"op": "remove"}\n'
    assert "".join(record_line(c) for c in ws.load_records("log.jsonl", Change)) == text  # read back: same bytes
