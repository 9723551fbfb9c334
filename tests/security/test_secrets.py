"""An API key in the environment reaches nothing a run writes or prints — not the store, blobs, results.json,
report.html, the command's output or its logs — even when the endpoint repeats it back in its error bodies."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import yaml
from faulty_endpoint import model_spec, serve
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.store import RunStore

KEY_ENV = "EVOARENA_TEST_LEAK_KEY"
SECRET = "sk-test-4b7f0c2e9a1d-never-written"


def test_a_key_is_written_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)
    with serve(rate=0.25, seed=3, kinds=("500", "429"), echo_auth=True) as ep:
        spec = tmp_path / "spec.yaml"
        spec.write_text(yaml.safe_dump({
            "name": "secrets", "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 4, "n_val": 3,
                                                                          "n_test": 6}},
            "methods": [{"name": "frozen"}, {"name": "reflexion"}],
            "models": {"ep": model_spec(ep.url, api_key_env=KEY_ENV, max_retries=1)},
            "roles": {"solver": "ep", "reflector": "ep"}, "protocol": {"on_provider_error": "record"}}))
        result = CliRunner().invoke(app, ["run", str(spec), "--run-dir", str(tmp_path / "run")])
        assert ep.served["500"] + ep.served["429"] > 0  # the careless server did repeat the key back
    assert result.exit_code == 0, result.output
    written = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"run.sqlite", "results.json", "report.html"}
    needle = SECRET.encode()
    leaks = [str(p) for p in written if needle in p.read_bytes()]
    leaks += [f"{p}-wal" for p in written if Path(f"{p}-wal").exists() and needle in Path(f"{p}-wal").read_bytes()]
    assert leaks == []
    assert SECRET not in result.output and SECRET not in caplog.text
    errors = RunStore(tmp_path / "run").query("SELECT error FROM calls WHERE error LIKE '%you sent%'")
    assert errors  # the echoed header did reach the ledger's error text, with the key redacted out of it
