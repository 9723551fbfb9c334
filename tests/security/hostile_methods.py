"""Methods that attack their cell: they look for the test split, the run database and API keys by every route a
curious or malicious method has, record what they found in their harness (the only place they may write), and try
to forge test scores from a thread. Imported by name, so that a method's own process can import them too."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from evoarena.api import (
    AgentAction,
    EpisodeAgent,
    EpisodeContext,
    EpisodeView,
    Method,
    PracticeContext,
    TaskView,
    method,
)
from evoarena.harness import Manifest
from evoarena.protocol.boundary.ops import Grade, Label, MakeAttempt

SECRET_ENV = "EVOARENA_TEST_SECRET_KEY"


def _run_db(root: Path) -> Path:
    return root.parents[2] / "run.sqlite"  # <run>/cells/<cell>/harness


def _rewrite(db: Path, sql: str) -> int:
    """Run an UPDATE on a database this process should not reach; the rows changed (0 when it is out of reach)."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=0.2)
        with con:
            n = con.execute(sql).rowcount
        con.close()
        return int(n)
    except sqlite3.Error:
        return 0


def _forge(db: Path) -> int:
    """Mark every test attempt as passed."""
    return _rewrite(db, "UPDATE attempts SET score = 1.0, passed = 1 WHERE phase = 'test'")


def snoop(ctx: PracticeContext) -> dict[str, Any]:
    """Every route, and what it gave."""
    from evoarena.api import Benchmark, Task
    from evoarena.models.cache import default_cache_path
    from evoarena.store import RunStore

    root = Path(ctx.harness.root)
    objs = gc.get_objects()
    frames, frame = 0, sys._getframe()
    stores_in_frames = 0
    while frame is not None:
        frames += 1
        stores_in_frames += sum(isinstance(v, RunStore) or isinstance(getattr(v, "store", None), RunStore)
                                for v in list(frame.f_locals.values()))
        frame = frame.f_back
    db = _run_db(root)
    try:
        db_bytes = len(db.read_bytes())
    except OSError:
        db_bytes = -1
    return {
        "private": [n for n in ("_benchmark", "_grader", "_models", "_method") if hasattr(ctx, n)],
        "model_store": hasattr(ctx.model("solver"), "store"),
        "gc_tasks": sum(isinstance(o, Task) for o in objs),
        "gc_test_tasks": sum(isinstance(o, Task) and o.split == "test" for o in objs),
        "gc_benchmarks": sum(isinstance(o, Benchmark) for o in objs),
        "gc_stores": sum(isinstance(o, RunStore) for o in objs),
        "frame_stores": stores_in_frames,
        "db_readable": db_bytes > 0,
        "secret_in_env": any(SECRET_ENV in k or "sk-test" in v for k, v in os.environ.items()),
        "cache_writable": _tries(lambda: _write_lock(default_cache_path())),
        "pid": os.getpid(),
    }


@method("test-hostile-snoop")
class HostileSnoop(Method):
    """Practises like frozen (its harness never changes but for `found.json`)."""

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if not ctx.harness.exists("found.json"):
            ctx.harness.write("found.json", json.dumps(snoop(ctx), sort_keys=True))
        return None


@method("test-hostile-forger")
class HostileForger(Method):
    """Behaves like frozen, and starts a thread that keeps marking the run's test attempts as passed."""

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if not ctx.harness.exists("forger.json"):
            db = _run_db(Path(ctx.harness.root))
            ctx.harness.write("forger.json", json.dumps({"started": True}))

            def forge() -> None:
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    _forge(db)
                    time.sleep(0.005)

            threading.Thread(target=forge, daemon=True).start()
        return None


@method("test-hostile-spinner")
class Spinner(Method):
    """Spends CPU in its own code until something stops it (a method's process has a CPU limit)."""

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        while True:
            pass


class _SnoopingAgent(EpisodeAgent):
    """An episode agent that, at its first step, asks its context's channel for what only a practice step may ask
    (a label, a grade, an attempt), counts what gc shows it and, when told to, edits a file outside the harness."""

    def __init__(self, escape: bool) -> None:
        self.escape = escape

    def act(self, view: EpisodeView, ctx: EpisodeContext) -> AgentAction:
        from evoarena.api import Benchmark, Task
        from evoarena.store import RunStore

        info: dict[str, Any] = {}
        if view.step == 0:
            port = getattr(ctx, "_port", None)
            refused = []
            for name, op in (("label", Label(task_id=view.task.id)),
                             ("grade", Grade(task_id=view.task.id, answer="x", number=1)),
                             ("attempt", MakeAttempt(task_id=view.task.id, submit=True))):
                try:
                    if port is None:
                        raise RuntimeError("no channel")
                    port.call(op)
                except Exception as err:  # noqa: BLE001 - refused is what the test wants
                    refused.append(f"{name}: {type(err).__name__}")
            objs = gc.get_objects()
            info = {"pid": os.getpid(), "refused": refused,
                    "gc_tasks": sum(isinstance(o, Task) for o in objs),
                    "gc_benchmarks": sum(isinstance(o, Benchmark) for o in objs),
                    "gc_stores": sum(isinstance(o, RunStore) for o in objs)}
            if self.escape:
                ctx.edit("../escaped.txt", "out of the harness")
        return AgentAction(view.admissible[0] if view.admissible else "north", {}, info)


@method("test-hostile-agent")
class HostileAgent(Method):
    """Practises like frozen; its episode agent snoops (and, with `escape`, writes outside the harness root)."""

    defaults = {"escape": False}

    def __init__(self, escape: bool = False) -> None:
        self.escape = escape

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        ctx.solve(task)
        return None

    def episode_agent(self, tree: Any, task: TaskView) -> EpisodeAgent | None:
        return _SnoopingAgent(self.escape)


def _tries(fn: Any) -> bool:
    """Whether `fn()` went through (any OSError or sqlite error: it did not)."""
    try:
        fn()
        return True
    except (OSError, sqlite3.Error):
        return False


def _write_lock(db: Path) -> None:
    """Take the database's write lock and let it go: proof of write access that changes nothing."""
    con = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=0.2)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
    finally:
        con.close()


def _connects(port: int) -> None:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=1.0):
        pass


def _poison(cache: Path) -> int:
    """Rewrite every cached completion to a wrong answer."""
    return _rewrite(cache, "UPDATE responses SET completion = json_set(completion, '$.text', 'POISONED')")


def _open_files() -> list[str]:
    """What this process's open file descriptors point to (pipes, sockets, files)."""
    fds = Path("/proc/self/fd")
    out = []
    for fd in os.listdir(fds):
        with contextlib.suppress(OSError):
            out.append(os.readlink(fds / fd))
    return out


def _refused(ctx: PracticeContext, kind: str, payload: dict[str, Any]) -> str:
    try:
        ctx.log(kind, payload)
    except Exception as err:  # noqa: BLE001 - a refusal is what the test wants
        return f"{type(err).__name__}: {err}"
    return ""


@method("test-hostile-boundary")
class HostileBoundary(Method):
    """Practises like frozen. Once, it tries every route out of its process to the run: the run process's /proc
    (environment, memory), a signal to it (signal 0: the permission check, nothing sent), a listener on 127.0.0.1,
    write access to the run database and the response cache, and the runner's own event kinds through `ctx.log`;
    it records what went through in `found.json`. With `forge`, threads also keep rewriting test scores and cached
    completions for the rest of its life."""

    defaults = {"run_pid": 0, "port": 0, "cache_dir": "", "forge": False}

    def __init__(self, run_pid: int = 0, port: int = 0, cache_dir: str = "", forge: bool = False) -> None:
        self.run_pid, self.port, self.cache = run_pid, port, Path(cache_dir) / "responses.sqlite"
        self.forge = forge

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        if ctx.harness.exists("found.json"):
            return None
        db, proc = _run_db(Path(ctx.harness.root)), Path(f"/proc/{self.run_pid}")
        environ = b""
        with contextlib.suppress(OSError):
            environ = (proc / "environ").read_bytes()
        found = {
            "pid": os.getpid(),
            "environ_readable": bool(environ), "secret_seen": SECRET_ENV.encode() in environ,
            "mem_readable": _tries(lambda: (proc / "mem").open("rb").close()),
            "signal": _tries(lambda: os.kill(self.run_pid, 0)),
            "network": _tries(lambda: _connects(self.port)),
            "db_writable": _tries(lambda: _write_lock(db)),
            "cache_writable": _tries(lambda: _write_lock(self.cache)),
            "secret_in_env": any(SECRET_ENV in k for k in os.environ),
            "secret_in_argv": SECRET_ENV.encode() in Path("/proc/self/cmdline").read_bytes(),
            "open_files": _open_files(),
            "refused": {kind: _refused(ctx, kind, payload) for kind, payload in (
                ("method_isolation", {"level": "bwrap", "asked": "bwrap", "holds": [], "lacks": []}),
                ("run_finished", {"cells": 0}), ("probes", {"threshold": 0.0}))},
        }
        ctx.harness.write("found.json", json.dumps(found, sort_keys=True))
        if self.forge:
            def forge() -> None:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    _forge(db)
                    _poison(self.cache)
                    time.sleep(0.005)

            threading.Thread(target=forge, daemon=True).start()
        return None
