"""Shared fixtures: every test gets its own response cache, and a small scripted spec to run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from evoarena.models.shipped import MODELS_DIR_ENV, models_dir
from evoarena.spec import ExperimentSpec, parse_spec

if TYPE_CHECKING:
    from evoarena.models.embedded import EmbeddedBackend

# Assembled shipped models stay where the user's cache keeps them (hundreds of MB each, built once), even though
# every test gets its own response cache.
MODELS_DIR = models_dir()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache_dir = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(cache_dir))
    monkeypatch.setenv(MODELS_DIR_ENV, str(MODELS_DIR))
    return cache_dir


def small_spec(**overrides: Any) -> ExperimentSpec:
    data: dict[str, Any] = {
        "name": "small",
        "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 6, "n_val": 5, "n_test": 10}},
        "methods": [{"name": "frozen"}, {"name": "reflexion"}, {"name": "bootstrap_fewshot",
                                                              "params": {"max_labeled_demos": 4}}],
        "models": {"scripted": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "scripted", "reflector": "scripted"},
        "seeds": [0],
    }
    data.update(overrides)
    return parse_spec(data)


@pytest.fixture
def spec() -> ExperimentSpec:
    return small_spec()


@pytest.fixture
def make_spec() -> Any:
    return small_spec


# --- the real embedded model and a real OpenAI-compatible server on 127.0.0.1 (tests marked `embedded`) ----------


SMALL = "qwen2.5-coder-0.5b-instruct"  # `--model embedded-small`: the tests' real model (an instruct model)


@pytest.fixture(scope="session")
def embedded_backend() -> EmbeddedBackend:
    """Qwen2.5-Coder-0.5B-Instruct in process (llama-cpp-python, its GGUF chat template), loaded once per session."""
    from evoarena.models.embedded import EmbeddedBackend
    from evoarena.spec import ModelSpec

    b = EmbeddedBackend(ModelSpec(backend="embedded", model=SMALL))
    b.load()
    return b


@pytest.fixture(scope="session")
def gemma_backend() -> EmbeddedBackend:
    """Gemma 3 270M in process: the shipped base model (plain completion), loaded once per session."""
    from evoarena.models.embedded import EmbeddedBackend
    from evoarena.spec import ModelSpec

    b = EmbeddedBackend(ModelSpec(backend="embedded", model="gemma3-270m"))
    b.load()
    return b


Served = tuple[str, str]  # (base_url, model name the server reports)


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(embedded_backend: EmbeddedBackend, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`evoarena serve embedded-small` (llama.cpp's OpenAI-compatible server) on 127.0.0.1; yield (base_url, served
    model); at the end stop it as Ctrl-C does and check that it exits cleanly."""
    served = _serve([], tmp_path_factory.mktemp("llama_server") / "server.log")
    base_url, model_name, _ = next(served)
    yield base_url, model_name
    next(served, None)  # stop it


@pytest.fixture(scope="session")
def llama_function_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """`evoarena serve embedded-small --function-calling` (llama-cpp-python's chatml-function-calling chat format),
    as `llama_server`; yield (base_url, served model, the path of what it printed)."""
    yield from _serve(["--function-calling"], tmp_path_factory.mktemp("llama_function_server") / "server.log")


def _serve(extra: list[str], log_path: Path) -> Iterator[tuple[str, str, Path]]:
    port = _free_port()
    cmd = [sys.executable, "-m", "evoarena.cli", "serve", "embedded-small", "--port", str(port), "--n-ctx", "8192",
           *extra]
    env = {**os.environ, MODELS_DIR_ENV: str(MODELS_DIR), "COLUMNS": "200"}
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 180
        model_name = None
        while model_name is None:
            if proc.poll() is not None:
                pytest.fail(f"evoarena serve exited with {proc.returncode}:\n{_tail(log_path)}")
            if time.monotonic() > deadline:
                pytest.fail(f"evoarena serve did not answer /v1/models in 180 s:\n{_tail(log_path)}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
                    model_name = json.load(resp)["data"][0]["id"]
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        while f"serving {model_name} at {base_url}" not in log_path.read_text(errors="replace"):
            if time.monotonic() > deadline:
                pytest.fail(f"evoarena serve did not print its base_url:\n{_tail(log_path)}")
            time.sleep(0.2)
        yield base_url, model_name, log_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
                pytest.fail(f"evoarena serve did not stop on SIGINT:\n{_tail(log_path)}")
    assert proc.returncode == 0, f"evoarena serve exited with {proc.returncode}:\n{_tail(log_path)}"
    with socket.socket() as s:  # the llama.cpp server went with it
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the llama.cpp server outlived evoarena serve"


# --- the sheets benchmark: a (trusted) program run in-process, graded exactly like the sandbox path -------------


@pytest.fixture
def run_local(tmp_path: Path) -> Any:
    """`run(program, task) -> Grade`: our own reference programs run in-process on a task's cases, so most sheets
    tests need no sandbox start-up."""
    from evoarena.benchmarks.sheets.core import SheetTask, split_sheet
    from evoarena.benchmarks.sheets.driver import read_cells
    from evoarena.benchmarks.sheets.execution import CaseRun, ProgramRun
    from evoarena.benchmarks.sheets.grading import Grade, grade_run
    from evoarena.benchmarks.sheets.layout import workbook_bytes

    counter = iter(range(10_000))

    def run(program: str, task: SheetTask) -> Grade:
        namespace: dict[str, Any] = {"__name__": "solution"}
        exec(compile(program, "solution.py", "exec"), namespace)  # noqa: S102 - our own reference programs
        cases = []
        for case in task.cases:
            n = next(counter)
            source, target = tmp_path / f"in{n}.xlsx", tmp_path / f"out{n}.xlsx"
            source.write_bytes(case.input_xlsx or workbook_bytes(case.input_sheets or {}))
            namespace["solve"](str(source), str(target))
            values, styles, missing, formulas, note = read_cells(
                str(target), [split_sheet(k, "") for k in case.expected], False
            )
            cases.append(CaseRun(values, styles=styles, missing_sheets=missing, formulas=formulas, note=note))
        return grade_run(task, ProgramRun(cases, "in-process"))

    return run
