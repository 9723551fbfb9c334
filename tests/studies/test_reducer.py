"""The reducer study (evoarena.studies.reducer): the logs are fixed by their seed and straddle 4 KiB, every
unfaithful receipt is rejected for its own reason, no credential-like log reaches the callable, the checks catch a
reducer that lets either through, the numbers in docs/runtime.md are what they were, and the command prints the
study as JSON."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.runtime import EvidenceReducer, Reduced, ReducerRequest, looks_like_credentials
from evoarena.runtime.text import count_lines, sha256_text, utf8_len
from evoarena.studies.reducer import BEHAVIOURS, ScriptedReducer, cases, expected, replay, study


def test_the_logs_are_seeded_and_straddle_the_threshold() -> None:
    cs = cases(0)
    assert cs == cases(0) and cs != cases(1)
    assert [utf8_len(c.log) for c in cs[:2]] == [4095, 4096]
    sizes = [utf8_len(c.log) for s in range(3) for c in cases(s)]
    assert min(sizes) < 4096 and max(sizes) > 8192
    assert {c.kind for c in cs} == {"pytest", "gcc", "npm"}
    assert all(looks_like_credentials(c.log) == c.credential for s in range(10) for c in cases(s))
    with pytest.raises(ValueError):
        cases(0, logs=1)


def test_every_unfaithful_receipt_is_rejected_for_its_own_reason() -> None:
    rows = [replay(seed, 12) for seed in range(4)]
    for r in rows:
        assert r.unfaithful_accepted == r.credential_sent == r.wrong_reason == 0
        assert r.calls == r.eligible and r.accepted <= r.eligible - r.unfaithful
        assert r.receipt_bytes < r.accepted_raw_bytes or r.accepted == 0
    assert sum(r.unfaithful for r in rows) > 0 and sum(r.accepted for r in rows) > 0
    assert sum(r.credential_logs for r in rows) > 0


def test_the_scripted_reducer_sees_only_what_it_should() -> None:
    cs = [c for c in cases(2) if expected(c) == "likely-credentials"]
    assert cs
    scripted = ScriptedReducer({sha256_text(c.log): c.behaviour for c in cs})
    reducer = EvidenceReducer(scripted)
    assert all(reducer.reduce(c.log, command=c.command, exit_status=c.exit_status).reason == "likely-credentials"
               for c in cs)
    assert scripted.received == []


class _Lax(EvidenceReducer):
    """Sends every log and takes every reply: what the checks exist to prevent."""

    def reduce(self, log: str, *, command: str, exit_status: int, designated: bool | None = None) -> Reduced:
        req = ReducerRequest(command, log, exit_status, sha256_text(log), utf8_len(log), count_lines(log))
        self.reducer(req)
        return Reduced("receipt", True, "applied", req.source_sha256, req.source_bytes, called=True)


def test_a_reducer_without_its_checks_is_caught() -> None:
    r = replay(0, 24, make=_Lax)
    assert r.unfaithful_accepted == r.unfaithful > 0
    assert r.credential_sent == r.credential_logs > 0
    assert r.wrong_reason == r.logs - (r.eligible - r.unfaithful)  # only the faithful, eligible logs are "applied"


def test_ten_seeds_as_in_the_docs() -> None:
    rows = study(10)
    assert (sum(r.logs for r in rows), sum(r.calls for r in rows), sum(r.accepted for r in rows)) == (240, 124, 45)
    assert (sum(r.unfaithful for r in rows), sum(r.unfaithful_accepted for r in rows)) == (79, 0)
    assert (sum(r.credential_logs for r in rows), sum(r.credential_sent for r in rows)) == (44, 0)
    assert sum(r.saved_bytes for r in rows) == 348_458
    reasons = {k for r in rows for k in r.reasons}
    assert set(BEHAVIOURS.values()) <= reasons  # every way of being unfaithful was met and named


def test_the_command_line_prints_the_study_as_json() -> None:
    result = CliRunner().invoke(app, ["study", "reducer", "--seeds", "1", "--logs", "8", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["study"], data["seeds"], data["logs"]) == ("reducer", 1, 8)
    assert data["settings"] == {"min_bytes": 4096, "max_reply_bytes": 8192, "max_evidence": 12}
    (row,) = data["rows"]
    assert row == json.loads(json.dumps(replay(0, 8).row()))
    assert "Unfaithful receipts accepted: 0 of" in data["reading"]
