"""Tests of evoarena.sandbox.  Behaviour that every mode shares is checked under each isolation
level this machine offers (the detected one and every weaker one), via ``runner.run_with``."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

from evoarena.sandbox import ISOLATION_LEVELS, SandboxLimits, SandboxResult, isolation, isolation_level, run_python
from evoarena.sandbox.runner import SCRATCH_PREFIX, run_with
from evoarena.sandbox.worker import warm_supported

WARM = ["bwrap:warm"] if warm_supported() else []
LEVELS = [*isolation.detect().available, *WARM]  # every level cold, and bwrap through the warm worker
RLIMITED = [lvl for lvl in LEVELS if lvl != "timeout-only"]
NO_NET = ("bwrap", "bwrap:warm", "unshare-net+rlimits")


def run(mode: str, code: str, **kwargs: object) -> SandboxResult:
    level, warm = _split(mode)
    return run_with(level, code, warm=warm, **kwargs)  # type: ignore[arg-type]


def _split(mode: str) -> tuple[str, bool | None]:
    """A test mode: an isolation level, cold at `bwrap` (``bwrap``), or through the warm worker (``bwrap:warm``)."""
    level, _, warm = mode.partition(":")
    return level, (True if warm else False if level == "bwrap" else None)


@pytest.fixture
def listener() -> Iterator[int]:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    try:
        yield srv.getsockname()[1]
    finally:
        srv.close()


def test_isolation_level_is_documented_and_cached() -> None:
    assert isolation_level() in ISOLATION_LEVELS
    assert isolation_level() == isolation_level()


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("bwrap") is None, reason="no bwrap")
def test_working_bwrap_is_used() -> None:
    plain = subprocess.run(["bwrap", "--ro-bind", "/", "/", "--unshare-all", "true"], check=False)
    if plain.returncode != 0:
        pytest.skip("bwrap is installed but cannot create namespaces on this machine")
    assert isolation_level() == "bwrap"


@pytest.mark.parametrize("level", LEVELS)
def test_stdout_stdin_and_result(level: str) -> None:
    res = run(level, "import sys\nprint('hello', sys.stdin.read().upper())", stdin="abc")
    assert res.stdout == "hello ABC\n"
    assert res.stderr == ""
    assert res.returncode == 0 and res.ok() and not res.timed_out and not res.truncated
    assert res.isolation == _split(level)[0] and res.warm == level.endswith(":warm") and 0 < res.wall_s < 10


def test_run_python_uses_detected_level() -> None:
    res = run_python("print(6 * 7)")
    assert res.ok() and res.stdout == "42\n" and res.isolation == isolation_level()


@pytest.mark.parametrize("python", ["python3", "/usr/bin/python3"])
def test_other_interpreter(python: str) -> None:
    if shutil.which(python) is None:
        pytest.skip(f"no {python} here")
    res = run_python("import sys\nprint(sys.version_info[0], sys.flags.ignore_environment)", python=python)
    assert res.ok(), res.stderr
    assert res.stdout == "3 1\n"
    with pytest.raises(FileNotFoundError):
        run_python("pass", python="/nonexistent/python3")


def test_unicode_round_trip() -> None:
    res = run_python("import sys\nprint(sys.stdin.read()[::-1])", stdin="héllo ✓")
    assert res.stdout == "✓ olléh\n"


@pytest.mark.parametrize("level", LEVELS)
def test_files_visible_and_importable(level: str) -> None:
    files = {"helper.py": "X = 41\n", "data/input.txt": "payload"}
    res = run(level, "import helper\nprint(helper.X + 1, open('data/input.txt').read())", files=files)
    assert res.ok(), res.stderr
    assert res.stdout == "42 payload\n"


@pytest.mark.parametrize("name", ["/etc/passwd", "../escape.py", "a/../../b.py", "a/../b.py", "C:\\x.py",
                                  "\\\\server\\share\\x", "..\\x.py", "", "main.py", "./main.py"])  # fmt: skip
def test_bad_file_names_rejected(name: str) -> None:
    with pytest.raises(ValueError):
        run_python("pass", files={name: "x"})


def test_nonzero_exit_reported() -> None:
    res = run_python("import sys\nprint('bye')\nsys.exit(3)")
    assert res.returncode == 3 and not res.ok() and not res.timed_out and res.stdout == "bye\n"
    res = run_python("raise ValueError('boom')")
    assert res.returncode == 1 and "ValueError: boom" in res.stderr


@pytest.mark.parametrize("level", LEVELS)
def test_wall_limit_kills_sleeper(level: str) -> None:
    start = time.monotonic()
    res = run(level, "import time\nwhile True:\n    time.sleep(0.1)", limits=SandboxLimits(wall_s=1.0))
    assert res.timed_out and res.returncode is None and not res.ok()
    assert 1.0 <= res.wall_s < 3.0
    assert time.monotonic() - start < 3.0


@pytest.mark.parametrize("level", RLIMITED)
def test_cpu_limit_kills_spinner(level: str) -> None:
    res = run(level, "while True:\n    pass", limits=SandboxLimits(cpu_s=1, wall_s=10.0))
    assert res.timed_out and res.returncode is None
    assert res.wall_s < 5.0  # the CPU limit, not the wall limit, ended it


@pytest.mark.parametrize("level", RLIMITED)
def test_memory_hog_fails(level: str) -> None:
    code = "x = bytearray(2 * 1024 ** 3)\nprint('allocated', len(x))"
    res = run(level, code, limits=SandboxLimits(memory_mb=256))
    assert not res.ok() and "allocated" not in res.stdout
    assert "MemoryError" in res.stderr


@pytest.mark.parametrize("level", LEVELS)
def test_network(level: str, listener: int) -> None:
    code = (
        "import socket\ntry:\n"
        f"    socket.create_connection(('127.0.0.1', {listener}), timeout=3).close()\n    print('CONNECTED')\n"
        "except OSError as exc:\n    print('BLOCKED', type(exc).__name__)"
    )
    allowed = run(level, code, limits=SandboxLimits(network=True))
    assert allowed.stdout == "CONNECTED\n", allowed.stderr
    if level not in NO_NET:
        pytest.skip(f"isolation {level!r} cannot switch the network off (needs bwrap or unshare -n)")
    blocked = run(level, code)
    assert blocked.ok(), blocked.stderr
    assert blocked.stdout.startswith("BLOCKED"), blocked.stdout


@pytest.mark.skipif(isolation_level() != "bwrap", reason="filesystem isolation needs bubblewrap")
def test_bwrap_confines_filesystem(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    target = tmp_path / "escape.txt"
    code = f"""
import os, sys
try:
    print(open({str(secret)!r}).read())
except OSError as exc:
    print("cannot read", type(exc).__name__)
try:
    os.makedirs({str(tmp_path)!r}, exist_ok=True)
    open({str(target)!r}, "w").write("escaped")
except OSError as exc:
    print("cannot write", type(exc).__name__)
for d in (sys.prefix, "/usr", "/etc", "/"):
    try:
        open(os.path.join(d, "evoarena-escape"), "w").close()
        print("WROTE", d)
    except OSError:
        pass
print("repo visible" if os.path.exists({str(Path(__file__).resolve())!r}) else "repo hidden")
open("inside.txt", "w").write("fine")
print(open("inside.txt").read())
"""
    res = run_python(code)
    assert res.ok(), res.stderr
    assert "top secret" not in res.stdout and "cannot read" in res.stdout
    assert "WROTE" not in res.stdout and "repo hidden" in res.stdout and "fine" in res.stdout
    assert not target.exists()
    for d in (sys.prefix, "/usr", "/etc", "/"):
        assert not os.path.exists(os.path.join(d, "evoarena-escape"))


def _procs_with(token: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if token in (proc.info.get("cmdline") or []):
            found.append(proc)
    return found


@pytest.mark.parametrize("level", LEVELS)
def test_timeout_kills_whole_tree(level: str) -> None:
    token = f"evoarena-test-{uuid.uuid4().hex}"
    code = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(0.05)", {token!r}])
subprocess.Popen([sys.executable, "-c", "while True: pass", {token!r}], start_new_session=True)
print("started", flush=True)
while True:
    time.sleep(0.1)
"""
    res = run(level, code, limits=SandboxLimits(wall_s=1.5))
    assert res.timed_out and "started" in res.stdout
    assert _procs_with(token) == []


@pytest.mark.parametrize("level", LEVELS)
def test_background_children_killed_after_normal_exit(level: str) -> None:
    token = f"evoarena-test-{uuid.uuid4().hex}"
    code = f"""
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time\\ntime.sleep(60)", {token!r}])
time.sleep(0.3)
print("parent done")
"""
    res = run(level, code)
    assert res.ok() and res.stdout == "parent done\n", res.stderr
    assert _procs_with(token) == []


def test_output_cap_truncates() -> None:
    code = "import sys\nfor _ in range(40):\n    sys.stdout.write('x' * 1_000_000)\nsys.stderr.write('e' * 5000)"
    res = run_python(code, limits=SandboxLimits(output_bytes=1000))
    assert res.ok() and res.truncated
    assert res.stdout == "x" * 1000 and res.stderr == "e" * 1000
    assert not run_python("print('x' * 999)", limits=SandboxLimits(output_bytes=1000)).truncated


@pytest.mark.parametrize("level", LEVELS)
def test_scratch_dir_removed(level: str) -> None:
    code = "import os\nos.makedirs('d/e')\nopen('d/e/f', 'w').close()\nos.chmod('d', 0o500)\nprint(os.getcwd())"
    res = run(level, code)
    assert res.ok(), res.stderr
    scratch = res.stdout.strip()
    assert os.path.basename(scratch).startswith(SCRATCH_PREFIX)
    assert not os.path.exists(scratch)


@pytest.mark.parametrize("level", LEVELS)
def test_env_secrets_not_inherited(level: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOO_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("PYTHONPATH", "/nonexistent-evoarena")
    code = "import os, sys\nprint(sorted(os.environ))\nprint(os.environ.get('HOME') == os.getcwd())\nprint(sys.path)"
    res = run(level, code)
    assert res.ok(), res.stderr
    assert "FOO_API_KEY" not in res.stdout and "sk-should-not-leak" not in res.stdout
    assert "nonexistent-evoarena" not in res.stdout
    assert "True" in res.stdout.splitlines()[1]


def test_weaker_isolation_warns_once(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda n: None if n == "bwrap" else real_which(n))
    isolation.detect.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="evoarena.sandbox.isolation"):
            first, second = isolation_level(), isolation_level()
        assert first == second and first != "bwrap"
        warnings = [r for r in caplog.records if "isolation" in r.getMessage()]
        assert len(warnings) == 1 and first in warnings[0].getMessage()
    finally:
        isolation.detect.cache_clear()
        monkeypatch.undo()
        isolation.detect()  # re-probe for the remaining tests


def test_concurrent_runs_do_not_mix() -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: run_python(f"print(input() * {i})", stdin="ab\n"), range(6)))
    assert [r.stdout for r in results] == ["ab" * i + "\n" for i in range(6)]


def test_invalid_level_and_limits_rejected() -> None:
    with pytest.raises(ValueError):
        run_with("chroot", "pass")
    with pytest.raises(ValueError):
        SandboxLimits(wall_s=0)
