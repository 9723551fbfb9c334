"""The runner's records stay the runner's: every event kind the source writes is one a method may not log, and a
method's events are stored as the method's, so results.json reads the run's lifecycle, probes and isolation only
from what the runner wrote (the hostile runs are in test_certified.py)."""

from __future__ import annotations

import re
from pathlib import Path

from evoarena.protocol.run.step_service import RUNNER_EVENTS
from evoarena.report.collect import method_isolation, run_meta
from evoarena.report.snapshot import RunSnapshot
from evoarena.spec import parse_spec
from evoarena.store import RunStore, run_events

SRC = Path(__file__).resolve().parents[2] / "src" / "evoarena"
WRITES = re.compile(r"""(?:store\.event|self\._event)\(\s*["']([a-z_]+)["']""")


def test_every_event_kind_the_runner_writes_is_refused_from_methods() -> None:
    written = {kind for path in SRC.rglob("*.py") for kind in WRITES.findall(path.read_text("utf-8"))}
    typed = {cls.KIND for cls in vars(run_events).values()
             if isinstance(cls, type) and issubclass(cls, run_events.RunEvent) and cls is not run_events.RunEvent}
    assert {"run_started", "run_finished", "run_interrupted", "probes", "method_isolation"} <= typed
    written |= typed  # typed runner events are written through run_events.write_event
    assert {"method_isolation", "rollback"} <= written  # the pattern finds them
    assert written <= RUNNER_EVENTS, sorted(written - RUNNER_EVENTS)


def test_results_read_runner_events_only(tmp_path: Path) -> None:
    """A method event of a runner's kind (as a store written before the refusal might hold) is not read."""
    store = RunStore(tmp_path)
    spec = parse_spec({"name": "s", "benchmark": {"name": "arith"}, "methods": [{"name": "frozen"}],
                       "models": {"m": {"backend": "scripted", "model": "arith-student"}}, "roles": {"solver": "m"},
                       "protocol": {"isolation": "process"}})
    store.upsert_run(id="r", name="s", spec_json=spec.model_dump_json(), spec_hash="h", code_version="c",
                     evidence="mechanism", test_hash="t", isolation="bwrap", status="running", started_at="now",
                     finished_at=None)
    store.event("run_started", {"benchmark": {"name": "arith"}})
    store.event("method_isolation", {"asked": "none", "level": "none", "holds": ["cannot x"], "lacks": ["can y"]},
                cell="c")
    store.event("method_isolation", {"asked": "bwrap", "level": "bwrap", "holds": ["cannot y"], "lacks": []},
                cell="c", source="method")
    store.event("run_started", {"benchmark": {"name": "forged"}}, source="method")
    snap = RunSnapshot.load(store)
    got = method_isolation(snap)
    assert got["levels"] == ["none"] and got["holds"] == ["cannot x"] and got["lacks"] == ["can y"]
    assert run_meta(snap).extra["benchmark"] == {"name": "arith"}
