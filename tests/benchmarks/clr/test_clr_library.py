"""The shipped roster library and its checks."""

from __future__ import annotations

import re

import pytest
import yaml

from evoarena.benchmarks.clr import library
from evoarena.benchmarks.clr.library import KINDS, LibraryError, parse_library, shipped_library

UNI = "universe: u\nvalues: {A: first value., B: second value., C: third value.}\n"


def test_shipped_library_loads_and_spans_the_seven_kinds() -> None:
    lib = shipped_library()
    assert len(lib.rosters) >= 80
    kinds = {r.kind for r in lib.rosters.values()}
    assert kinds <= set(KINDS) and len(kinds) >= 5
    for r in lib.rosters.values():
        assert r.source and re.fullmatch(r"\d{4}-\d{2}-\d{2}", r.snapshot), r.id


def test_no_description_names_a_grouping() -> None:
    lib = shipped_library()
    names = sorted({a.lower() for r in lib.rosters.values() for a in (r.name, *r.aliases) if len(a) > 3}, key=len)
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in reversed(names)) + r")\b")
    offenders = []
    for u in lib.universes.values():
        for value, text in u.values.items():
            hits = [h for h in pattern.findall(text.lower()) if h not in value.lower()]
            if hits:
                offenders.append((value, hits[:2]))
    assert offenders == []


@pytest.mark.parametrize(
    ("roster", "message"),
    [
        (
            "- {id: r, name: R, kind: standards, universe: nope, source: s, snapshot: '2020-01-01', members: [A]}",
            "unknown universe",
        ),
        (
            "- {id: r, name: R, kind: standards, universe: u, source: s, snapshot: '2020-01-01', members: [Z]}",
            "members not in universe",
        ),
        (
            "- {id: r, name: R, kind: gossip, universe: u, source: s, snapshot: '2020-01-01', members: [A]}",
            "unknown kind",
        ),
    ],
)
def test_bad_rosters_are_refused_with_the_roster_named(roster: str, message: str) -> None:
    with pytest.raises(LibraryError, match=message):
        parse_library([("u.yaml", UNI)], [("r.yaml", roster)])


def test_the_fast_loader_reads_the_shipped_library_as_the_pure_python_one_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = shipped_library.__wrapped__()
    monkeypatch.setattr(library, "_SAFE_LOADER", yaml.SafeLoader)
    assert shipped_library.__wrapped__() == fast
