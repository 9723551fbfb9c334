"""Runner events are written and read through one pair of typed payloads: what is written reads back equal, a
method's event of a runner kind is never read as the runner's, and a payload from older code reads with defaults."""

from __future__ import annotations

from pathlib import Path

from evoarena.store import RunStore
from evoarena.store.run_events import MethodIsolation, ProbesRan, RunStarted, last_event, read_events, write_event


def test_an_event_reads_back_as_it_was_written(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    first = RunStarted(resumed=False, spec_hash="h", benchmark={"name": "arith"})
    write_event(store, first)
    write_event(store, RunStarted(resumed=True, spec_hash="h"))
    write_event(store, MethodIsolation(asked="bwrap", level="none", holds=["a"], lacks=["b"]), cell="c")
    assert read_events(store, RunStarted)[0] == first
    latest = last_event(store, RunStarted)
    assert latest is not None and latest.resumed and latest.benchmark is None
    assert read_events(store, MethodIsolation) == [MethodIsolation(asked="bwrap", level="none", holds=["a"],
                                                                   lacks=["b"])]
    assert last_event(store, ProbesRan) is None


def test_only_the_runners_events_are_read(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.event("probes", {"threshold": 0.9}, source="method")
    assert last_event(store, ProbesRan) is None and read_events(store, ProbesRan) == []


def test_a_payload_of_older_code_reads_with_defaults(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.event("probes", {"summaries": 2, "retired_field": True})
    got = last_event(store, ProbesRan)
    assert got == ProbesRan(threshold=None, summaries=2, warnings=0)
