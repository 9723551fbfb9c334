"""The warm sandbox worker (issue 13): a program run through it gives what a cold `bwrap` run gives (output, exit
status, files, limits), concurrent programs keep their own output, and a dead worker is restarted or, where it cannot
work, the program runs cold. The attack tests (a program's view, its capabilities) are in
tests/security/test_sandbox_warm.py."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

import evoarena.sandbox.worker as worker_mod
from evoarena.sandbox import SandboxLimits, SandboxResult, close_workers, isolation, run_python
from evoarena.sandbox.runner import run_with

pytestmark = pytest.mark.skipif(not worker_mod.warm_supported(), reason="no hardened bubblewrap: no warm worker")

_SCRATCH = re.compile(r"(?:/[\w.-]+)*/evoarena-sb-\d+-[a-z0-9_]{8}(?![\w-])")


def _both(code: str, **kwargs: object) -> tuple[SandboxResult, SandboxResult]:
    cold = run_with("bwrap", code, warm=False, **kwargs)  # type: ignore[arg-type]
    warm = run_with("bwrap", code, warm=True, **kwargs)  # type: ignore[arg-type]
    assert not cold.warm and warm.warm
    return cold, warm


def _seen(res: SandboxResult) -> tuple[str, str, int | None, str | None, bool, bool, str]:
    """What a caller sees of a run, with the scratch dir's path (which differs per run) replaced."""
    return (_SCRATCH.sub("<scratch>", res.stdout), _SCRATCH.sub("<scratch>", res.stderr), res.returncode, res.limit,
            res.timed_out, res.truncated, res.isolation)


PROGRAMS = {
    "stdout-stderr-exit": ("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)", {}, ""),
    "stdin": ("import sys\nprint(sys.stdin.read()[::-1], end='')", {}, "héllo ✓\nsecond line"),
    "files": ("import helper, pkg.mod, os\nprint(helper.X, pkg.mod.Y, open('data/deep/in.txt').read())\n"
              "print(sorted(os.listdir('.')))",
              {"helper.py": "X = 41\n", "pkg/__init__.py": "", "pkg/mod.py": "Y = 'm'\n", "data/deep/in.txt": "d"},
              ""),
    "argv-path-file": ("import os, sys\nprint(sys.argv, sys.path[0] == os.getcwd(), __file__, __name__, __spec__,\n"
                       "      sys.flags.ignore_environment, sys.flags.no_user_site, sys.flags.utf8_mode,\n"
                       "      os.environ['HOME'] == os.getcwd(), os.environ['TMPDIR'], sys.orig_argv[1:])", {}, ""),
    "stdio-config": ("import sys\nfor s in (sys.stdin, sys.stdout, sys.stderr):\n"
                     "    print(s.encoding, s.errors, s.line_buffering, s.isatty())", {}, ""),
    "exception": ("def f():\n    raise KeyError('boom')\nprint('before')\nf()", {}, ""),
    "syntax-error": ("x = (", {}, ""),
    "exit-message": ("import sys\nsys.exit('bad input')", {}, ""),
    "exit-none": ("raise SystemExit", {}, ""),
    "exit-big": ("import sys\nsys.exit(257)", {}, ""),
    "atexit-and-threads": ("import atexit, threading, time\natexit.register(lambda: print('atexit ran'))\n"
                           "def late():\n    time.sleep(0.2)\n    print('thread done', flush=True)\n"
                           "threading.Thread(target=late).start()\nprint('main done', end='')", {}, ""),
    "no-newline-unflushed": ("import sys\nsys.stdout.write('x' * 10000)", {}, ""),
    "unicode": ("print('✓ ünïcödé 日本', 'e\\u0301')", {}, ""),
    "signal": ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", {}, ""),
    "keyboard-interrupt": ("raise KeyboardInterrupt", {}, ""),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_same_result_as_a_cold_run(name: str) -> None:
    code, files, stdin = PROGRAMS[name]
    cold, warm = _both(code, files=files, stdin=stdin)
    assert _seen(warm) == _seen(cold)


LIMITED = {
    "wall": ("import time\nwhile True:\n    time.sleep(0.05)", SandboxLimits(wall_s=1.0)),
    "cpu": ("while True:\n    pass", SandboxLimits(cpu_s=1, wall_s=10.0)),
    "memory": ("x = bytearray(2 * 1024 ** 3)\nprint('allocated')", SandboxLimits(memory_mb=256)),
    "output": ("import sys\nsys.stdout.write('y' * 100_000)\nsys.stderr.write('e' * 5000)",
               SandboxLimits(output_bytes=1000)),
    "disk": ("import os\nblock = os.urandom(1 << 20)\nfor i in range(64):\n    open(f'f{i}', 'wb').write(block * 4)",
             SandboxLimits(disk_mb=16, wall_s=30.0)),
    "processes": ("import os, time\nfor _ in range(7):\n    os.fork()\ntime.sleep(30)",
                  SandboxLimits(max_processes=16, wall_s=30.0)),
    "file-size": ("open('big', 'wb').write(b'x' * (65 << 20))", SandboxLimits(memory_mb=512)),
}


def _outcome(res: SandboxResult) -> tuple[object, ...]:
    return (res.returncode, res.limit, res.timed_out, res.truncated, res.ok(), "MemoryError" in res.stderr,
            "File too large" in res.stderr)


@pytest.mark.parametrize("name", list(LIMITED))
def test_every_limit_is_reported_as_in_a_cold_run(name: str) -> None:
    code, limits = LIMITED[name]
    cold, warm = _both(code, limits=limits)
    assert _outcome(warm) == _outcome(cold), (warm, cold)
    assert warm.wall_s < (limits.wall_s + 3.0)


def test_run_python_uses_the_warm_worker_and_run_with_can_choose() -> None:
    res = run_python("print(6 * 7)")
    assert res.ok() and res.stdout == "42\n" and res.warm and res.isolation == "bwrap"
    assert not run_with("bwrap", "pass", warm=False).warm
    for level in isolation.detect().available[1:]:
        assert not run_with(level, "pass").warm  # below bwrap a program always runs cold
        with pytest.raises(ValueError):
            run_with(level, "pass", warm=True)


def test_concurrent_programs_keep_their_own_output() -> None:
    code = "import sys, time\nn = int(sys.stdin.read())\ntime.sleep(0.01 * (n % 3))\nprint('p' * n)\nsys.exit(n % 5)"
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda i: run_python(code, stdin=str(i)), range(48)))
    assert [(r.stdout, r.returncode, r.warm) for r in results] == [("p" * i + "\n", i % 5, True) for i in range(48)]


def _server(worker: worker_mod.WarmWorker) -> psutil.Process:
    """The fork server: the interpreter bubblewrap started (its children are the programs' A processes)."""
    assert worker.pid is not None
    for proc in psutil.Process(worker.pid).children(recursive=True):
        with_parent = proc.parent()
        if proc.name() != "bwrap" and with_parent is not None and with_parent.name() == "bwrap":
            return proc
    raise AssertionError("no fork server found")


@pytest.fixture
def fresh_workers() -> Iterator[None]:
    close_workers()
    yield
    close_workers()


@pytest.mark.usefixtures("fresh_workers")
def test_a_killed_server_is_restarted() -> None:
    assert run_python("print(1)").warm
    (worker,) = worker_mod._WORKERS.values()
    starts, root = worker.starts, worker.root
    _server(worker).kill()
    deadline = time.monotonic() + 5
    while worker._proc is not None and worker._proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    res = run_python("print(2)")
    assert res.ok() and res.stdout == "2\n" and res.warm
    assert worker.starts == starts + 1 and worker.root == root


@pytest.mark.usefixtures("fresh_workers")
def test_a_server_killed_mid_program_is_restarted_and_the_program_retried() -> None:
    assert run_python("print(1)").warm
    (worker,) = worker_mod._WORKERS.values()
    server = _server(worker)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(run_python, "import time\ntime.sleep(1.0)\nprint('done')")
        time.sleep(0.4)
        server.kill()
        res = pending.result(timeout=30)
    assert res.ok() and res.stdout == "done\n" and res.warm and worker.starts == 2


@pytest.mark.usefixtures("fresh_workers")
def test_close_workers_stops_the_worker_and_removes_its_root() -> None:
    assert run_python("print(1)").warm
    (worker,) = worker_mod._WORKERS.values()
    proc, root = worker._proc, worker.root
    assert proc is not None
    close_workers()
    assert proc.poll() is not None and not os.path.exists(root)
    assert run_python("print(1)").warm  # a new one starts on the next call


@pytest.mark.usefixtures("fresh_workers")
def test_a_worker_that_cannot_start_falls_back_to_cold_runs(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(worker_mod, "_server_source", lambda: "import sys\nsys.exit(3)\n")
    with caplog.at_level("WARNING", logger="evoarena.sandbox.worker"):
        first, second = run_python("print(1)"), run_python("print(2)")
    assert first.ok() and second.ok() and not first.warm and not second.warm
    assert first.stdout == "1\n" and second.stdout == "2\n"
    assert len([r for r in caplog.records if "no warm worker" in r.getMessage()]) == 1


@pytest.mark.usefixtures("fresh_workers")
def test_one_worker_per_interpreter_and_network_flag() -> None:
    assert run_python("pass").warm and run_python("pass", limits=SandboxLimits(network=True)).warm
    assert run_python("pass", limits=SandboxLimits(memory_mb=64)).warm  # other limits: the same worker
    assert sorted(net for _, net in worker_mod._WORKERS) == [False, True]
