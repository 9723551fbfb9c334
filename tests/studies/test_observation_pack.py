"""The ObservationPack replay (evoarena.studies.observation_pack): the session is fixed by its seed, mixes sizes and
repeats, every large output goes whole twice then as its handle, every stored output is recalled exactly, and the
numbers in docs/findings.md are what they were."""

from __future__ import annotations

import json
import statistics

import pytest
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.runtime import ObservationPack
from evoarena.runtime.text import utf8_len
from evoarena.studies.observation_pack import replay, session, study


def test_the_session_is_seeded_and_mixes_sizes_and_repeats() -> None:
    s = session(0)
    assert s == session(0) and s != session(1) and len(s) == 100
    sizes = [utf8_len(text) for _, text in s]
    assert min(sizes) < 4096 and any(4096 <= n <= 10 * 1024 for n in sizes) and max(sizes) > 10 * 1024
    assert len(set(s)) == 77  # 23 of the 100 outputs repeat an earlier one
    assert any(not text.isascii() for _, text in s)
    with pytest.raises(ValueError):
        session(0, requests=0)


def test_seed_0_is_what_the_findings_say() -> None:
    call, content = replay(0, keying="call"), replay(0, keying="content")
    assert (call.raw_bytes, call.sent_bytes, call.full_sends, call.handle_sends, call.stored) == (
        78_118_471, 16_564_366, 50, 1782, 25)
    assert (content.sent_bytes, content.full_sends, content.handle_sends, content.stored) == (15_983_304, 34, 1798, 17)
    assert call.raw_bytes == content.raw_bytes and call.passthrough_bytes == content.passthrough_bytes == 12_122_817
    for r in (call, content):
        assert r.rule_violations == 0 and r.recall_exact == r.stored and r.large_outputs == 17
    assert call.stored == 25  # 17 distinct large outputs, 8 of them arriving again as new messages
    assert round(call.sent_fraction, 3) == 0.212 and round(content.sent_fraction, 3) == 0.205


def test_without_packing_the_requests_carry_the_raw_bytes() -> None:
    r = replay(0, requests=30, pack=ObservationPack(threshold_bytes=10**9))
    assert r.sent_bytes == r.raw_bytes and r.handle_sends == r.full_sends == r.stored == 0
    assert r.passthrough_sends == 30 * 31 // 2  # request k carries k outputs


def test_ten_seeds_as_in_the_findings() -> None:
    rows = study(10)
    means = {k: round(statistics.fmean(r.sent_fraction for r in rows if r.keying == k), 3) for k in ("call", "content")}
    assert means == {"call": 0.397, "content": 0.391}
    assert all(r.rule_violations == 0 and r.recall_exact == r.stored for r in rows)
    share = statistics.fmean(r.passthrough_bytes / r.sent_bytes for r in rows if r.keying == "call")
    assert round(share, 2) == 0.83  # what is left is mostly outputs at or under 10 KiB


def test_the_command_line_prints_the_study_as_json() -> None:
    result = CliRunner().invoke(app, ["study", "observation-pack", "--seeds", "1", "--requests", "20", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["settings"] == {"threshold_bytes": 10240, "full_sends": 2, "excerpt_bytes": 1024, "page_chars": 4096}
    assert [(r["keying"], r["seed"]) for r in data["rows"]] == [("call", 0), ("content", 0)]
    assert data["rows"][0]["sent_bytes"] == replay(0, requests=20).sent_bytes
