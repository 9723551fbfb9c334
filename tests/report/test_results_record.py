"""RunResults is results.json: a written file reads back as the record and dumps to the same bytes, sections a run
lacks stay out of the file, and a file of another shape is refused rather than read in part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evoarena.report import build_results
from evoarena.report.html import write_report
from evoarena.report.results_record import RESULTS_FILE, Probes, RunResults


def test_a_written_record_reads_back_to_the_same_bytes(arith_basics: Path) -> None:
    text = (arith_basics / RESULTS_FILE).read_text("utf-8")
    record = RunResults.read(arith_basics / RESULTS_FILE)
    assert record.to_text() == text
    assert record.model_dump() == json.loads(text)


def test_the_record_is_read_by_field(arith_basics: Path) -> None:
    record = RunResults.read(arith_basics / RESULTS_FILE)
    frozen = record.condition("frozen", "scripted")
    assert frozen is not None and frozen.test is not None and frozen.test.n_tasks == 40
    assert record.condition("frozen", "no-such-model") is None
    assert [v.baseline for v in record.versus_baseline] == ["frozen"] * 3  # the spec's first condition
    assert record.calls.totals.calls == sum(s.calls for s in record.calls.by_role.values())
    assert record.meta.benchmark == "arith" and record.stats.ci_level == 0.95


def test_sections_a_run_lacks_stay_out_of_the_file(sample, tmp_path: Path) -> None:
    bare = build_results(*sample)
    assert bare.probes is None and bare.views is None
    assert not {"probes", "views"} & set(json.loads(bare.to_text()))
    assert all("probe_warnings" not in c for c in bare.model_dump()["conditions"])
    shown = bare.model_copy(update={"probes": Probes(threshold=0.5, rows=[]), "views": {"v": {"n": 1}}})
    write_report(tmp_path, shown)
    saved = json.loads((tmp_path / RESULTS_FILE).read_text("utf-8"))
    assert saved["probes"] == {"threshold": 0.5, "rows": []} and saved["views"] == {"v": {"n": 1}}


def test_a_file_of_another_shape_is_refused(sample, tmp_path: Path) -> None:
    data = build_results(*sample).model_dump()
    path = tmp_path / RESULTS_FILE
    path.write_text(json.dumps({**data, "surprise": 1}), "utf-8")
    with pytest.raises(ValidationError, match="surprise"):
        RunResults.read(path)
    del data["versus_baseline"]
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(ValidationError, match="versus_baseline"):
        RunResults.read(path)
