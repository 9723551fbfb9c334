"""`executor: {kind: ray}` on a real local Ray cluster (`ray start --head` on 127.0.0.1, 2 CPUs): cells run as Ray
tasks whose model calls go from the workers to the model (the scripted policy, or an OpenAI-compatible server on
127.0.0.1), and the driver alone writes the run store. The results are the local executor's, a run stopped on Ray
resumes — on Ray or locally — to the same results, and every request that reached the server is in the driver's
ledger."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from faulty_endpoint import model_spec, serve  # noqa: E402
from test_results_pinned import GOLDEN, narrowed, normalised  # noqa: E402

from evoarena.protocol.run.cell import ProviderUnavailable  # noqa: E402
from evoarena.protocol.run.runner import run_experiment  # noqa: E402
from evoarena.spec import ExecutorSpec, ExperimentSpec, SpecError  # noqa: E402
from evoarena.store import RunStore  # noqa: E402

pytestmark = pytest.mark.timeout(600)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Ray head node on 127.0.0.1 with 2 CPUs and token authentication, its token in a file of its own (Ray reads
    RAY_AUTH_TOKEN_PATH before ~/.ray/auth_token, so nothing in the home directory is needed or touched); the driver
    gets only the path, not RAY_AUTH_MODE, and finds the token itself. `ray start --block` runs in a session of its
    own and is stopped by its pid (its SIGTERM handler stops the processes it started), leaving any other Ray on the
    machine alone."""
    ray_cli = shutil.which("ray", path=os.path.dirname(sys.executable))
    assert ray_cli is not None, "the ray extra installs the `ray` command next to the interpreter"
    token = tmp_path_factory.mktemp("ray") / "auth_token"
    token.write_text(secrets.token_hex(32), "utf-8")
    port = _free_port()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
    log = token.with_name("ray-start.log")
    with log.open("wb") as out:
        head = subprocess.Popen([ray_cli, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
                                 "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
                                 "--object-store-memory=100000000"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        _wait_for_head(head, port, log)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("RAY_AUTH_TOKEN_PATH", str(token))
            mp.delenv("RAY_AUTH_MODE", raising=False)
            try:
                yield f"127.0.0.1:{port}"
            finally:
                os.environ.pop("RAY_AUTH_MODE", None)  # set by the driver's token detection; the context restores
    finally:
        _stop(head)


def _wait_for_head(head: subprocess.Popen[bytes], port: int, log: Path) -> None:
    """Until the head's GCS port answers; a `ray start` that exits first fails the fixture with its output."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if head.poll() is not None:
            pytest.fail(f"ray start exited {head.returncode}:\n{log.read_text('utf-8', 'replace')[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    pytest.fail(f"ray start did not open port {port} in 120 s:\n{log.read_text('utf-8', 'replace')[-3000:]}")


def _stop(head: subprocess.Popen[bytes]) -> None:
    """SIGTERM to `ray start --block` (it stops its node's processes), then SIGKILL to what is left of its session."""
    if head.poll() is None:
        head.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            head.wait(timeout=60)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGKILL)
    head.wait(timeout=30)


def on_ray(spec: ExperimentSpec, address: str, cpus_per_cell: float = 1.0) -> ExperimentSpec:
    return spec.model_copy(update={"executor": ExecutorSpec(kind="ray", address=address,
                                                            cpus_per_cell=cpus_per_cell)})


def _same(got: dict[str, Any], want: dict[str, Any], *, without: tuple[str, ...] = ()) -> None:
    """The same results.json, timestamps aside (and `without` keys: a stopped run's ledger also holds the calls that
    failed, which `calls` and the per-role call counts of `roles` include)."""
    def kept(d: dict[str, Any]) -> str:
        return json.dumps(normalised({k: v for k, v in d.items() if k not in without}), sort_keys=True, indent=1)

    assert kept(got) == kept(want)


@pytest.mark.parametrize("name", ["arith-basics", "clr-methods", "gepa-proposals"])
def test_results_on_ray_are_the_local_ones(name: str, cluster: str, tmp_path: Path) -> None:
    # one cell at a time (a cell asks for both CPUs): cells of these recipes share prompts, and two identical calls
    # in flight in two workers at once are both made (docs/protocol.md), which the next test keeps apart
    spec = on_ray(narrowed(name), cluster, cpus_per_cell=2)
    assert spec.spec_hash() == narrowed(name).spec_hash()  # where cells run is not part of what the run is
    got = run_experiment(spec, tmp_path / "run", concurrency=4)
    _same(got, json.loads((GOLDEN / f"{name}.json").read_text("utf-8")))
    store = RunStore(tmp_path / "run")
    assert store.query("SELECT kind FROM events WHERE kind = 'executor'") == [{"kind": "executor"}]
    attempts = store.query("SELECT count(*) AS n FROM attempts WHERE call_id IS NOT NULL AND call_id NOT IN "
                           "(SELECT id FROM calls)")
    assert attempts == [{"n": 0}]  # every attempt points at a call of the driver's ledger


def _endpoint_spec(make_spec: Any, url: str) -> ExperimentSpec:
    spec: ExperimentSpec = make_spec(seeds=[0, 1, 2, 3], models={"remote": model_spec(url, max_retries=1)},
                                     roles={"solver": "remote", "reflector": "remote"},
                                     protocol={"on_provider_error": "stop"})
    return spec


@pytest.mark.parametrize("resume_on", ["ray", "local"])
def test_cells_run_side_by_side_and_a_stopped_run_resumes(resume_on: str, cluster: str, tmp_path: Path,
                                                          make_spec: Any, tmp_path_factory: pytest.TempPathFactory,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    with serve(rate=0.0) as endpoint:
        spec = _endpoint_spec(make_spec, endpoint.url)
        want = run_experiment(spec, tmp_path / "local", probe=False)
        monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))  # nothing cached from above
        endpoint.rate, endpoint.kinds = 0.3, ("500",)  # a request failing twice in a row stops the run
        before = endpoint.requests
        with pytest.raises(ProviderUnavailable, match="run the same command again"):
            run_experiment(on_ray(spec, cluster), tmp_path / "run", probe=False)
        store = RunStore(tmp_path / "run")
        assert store.run()["status"] == "interrupted"  # type: ignore[index]
        rows = store.query("SELECT retries FROM calls WHERE cached = 0")
        assert sum(r["retries"] + 1 for r in rows) == endpoint.requests - before  # each request in the driver's ledger
        assert store.query("SELECT count(*) AS n FROM calls WHERE error IS NOT NULL")[0]["n"] >= 1
        finished = store.query("SELECT count(*) AS n FROM units")[0]["n"]
        endpoint.rate = 0.0
        again = on_ray(spec, cluster) if resume_on == "ray" else spec  # the executor is not part of the run
        half = run_experiment(again, tmp_path / "run", probe=False)
    _same(half, want, without=("calls", "roles"))
    assert RunStore(tmp_path / "run").query("SELECT count(*) AS n FROM units")[0]["n"] > finished


def test_ray_missing_is_a_one_line_spec_error(monkeypatch: pytest.MonkeyPatch, make_spec: Any,
                                              tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(SpecError, match=r"executor.kind: ray needs Ray installed"):
        run_experiment(on_ray(make_spec(), "local"), tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_the_command_line_runs_on_a_cluster_and_refuses_a_bad_executor(cluster: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"
    cli = CliRunner()
    args = ["run", str(recipe), "--model", "scripted", "--no-probe", "--json"]
    plain = cli.invoke(app, [*args, "--run-dir", str(tmp_path / "plain")])
    on_cluster = cli.invoke(app, [*args, "--run-dir", str(tmp_path / "ray"), "--executor", f"ray:{cluster}"])
    assert plain.exit_code == 0 and on_cluster.exit_code == 0, on_cluster.output
    tests = [[c["test"] for c in json.loads(r.stdout)["conditions"]] for r in (plain, on_cluster)]
    assert tests[0] == tests[1]
    assert RunStore(tmp_path / "ray").query("SELECT kind FROM events WHERE kind = 'executor'")
    bad = cli.invoke(app, [*args, "--run-dir", str(tmp_path / "bad"), "--executor", "dask"])
    assert bad.exit_code != 0 and "--executor: expected local, ray or ray:ADDRESS" in bad.output
    assert not (tmp_path / "bad").exists()


def test_a_driver_without_the_clusters_token_is_refused_in_one_line(cluster: str, tmp_path: Path) -> None:
    """A fresh process with an empty home and no RAY_AUTH_TOKEN* (a new machine, or a cluster whose token lives
    elsewhere): the run stops with one line saying where the driver looks for a token."""
    recipe = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    env.update(HOME=str(tmp_path), RAY_gcs_server_port_wait_time_s="1")  # one try to join, not 20
    done = subprocess.run([sys.executable, "-m", "evoarena.cli", "run", str(recipe), "--model", "scripted",
                           "--no-probe", "--executor", f"ray:{cluster}", "--run-dir", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert f"executor.address {cluster}: no Ray cluster answered or it refused this driver (no Ray token was found " \
           "here)" in " ".join((done.stderr + done.stdout).split())
    assert "RAY_AUTH_TOKEN_PATH" in done.stderr + done.stdout
