"""Attacks on the warm sandbox worker (issue 13): a program run through it keeps no capability, cannot make
namespaces or mounts, sees nothing of the server or of other programs (earlier or concurrent: scratch dirs, /tmp,
/dev/shm, processes, loopback), and its worker dies with its host."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest

import evoarena.sandbox.worker as worker_mod
from evoarena.sandbox import SandboxLimits, SandboxResult
from evoarena.sandbox.runner import run_with

pytestmark = pytest.mark.skipif(not worker_mod.warm_supported(), reason="no hardened bubblewrap: no warm worker")


def warm(code: str, **kwargs: object) -> SandboxResult:
    res = run_with("bwrap", code, warm=True, **kwargs)  # type: ignore[arg-type]
    assert res.warm, res
    return res


def test_no_capability_and_no_new_privileges() -> None:
    code = textwrap.dedent("""
        fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
        for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs"):
            print(name, int(fields[name].strip(), 16))
    """)
    res = warm(code)
    assert res.ok(), res.stderr
    assert res.stdout.split("\n")[:-1] == ["CapInh 0", "CapPrm 0", "CapEff 0", "CapBnd 0", "CapAmb 0", "NoNewPrivs 1"]


def test_no_namespace_no_mount_no_setuid() -> None:
    code = textwrap.dedent("""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        for name, flag in (("user", 0x10000000), ("mount", 0x20000), ("net", 0x40000000), ("pid", 0x20000000)):
            print(name, libc.unshare(flag), os.strerror(ctypes.get_errno()))
        print("mount", libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None), os.strerror(ctypes.get_errno()))
        print("umount", libc.umount2(os.getcwd().encode(), 2), os.strerror(ctypes.get_errno()))
        try:
            os.setuid(1234)
            print("setuid worked")
        except OSError:  # EINVAL: no other uid is mapped into the namespace; EPERM: no CAP_SETUID
            print("setuid refused")
    """)
    res = warm(code)
    assert res.ok(), res.stderr
    lines = res.stdout.splitlines()
    assert [line.split()[1] for line in lines[:6]] == ["-1"] * 6, res.stdout
    assert lines[6] == "setuid refused"


def test_proc_sys_and_dev_are_read_only() -> None:
    code = textwrap.dedent("""
        for path in ("/proc/sys/vm/drop_caches", "/proc/sys/kernel/hostname", "/dev/evoarena-left-behind"):
            try:
                with open(path, "w") as fh:
                    fh.write("1")
                print("WROTE", path)
            except OSError as exc:
                print("refused", path, type(exc).__name__)
    """)
    res = warm(code)
    assert res.ok(), res.stderr
    assert "WROTE" not in res.stdout and res.stdout.count("refused") == 3


def test_nothing_carries_over_to_the_next_program() -> None:
    first = warm(textwrap.dedent("""
        import os
        for path in ("/tmp/left-behind", "/dev/shm/left-behind", "left-behind"):
            open(path, "w").write("secret")
        os.makedirs("/tmp/dir/sub")
        print(os.getcwd())
    """))
    assert first.ok(), first.stderr
    scratch = first.stdout.strip()
    second = warm(textwrap.dedent(f"""
        import os
        print(sorted(os.listdir("/tmp")), os.listdir("/dev/shm"), sorted(os.listdir(".")))
        print(os.path.exists({scratch!r}), os.path.exists({scratch + "/left-behind"!r}))
        print(os.listdir(os.path.dirname(os.getcwd())) == [os.path.basename(os.getcwd())])
    """))
    assert second.ok(), second.stderr
    tmp_listing, shm, own = eval(second.stdout.splitlines()[0].replace("] [", "], [", 2))
    assert "left-behind" not in tmp_listing and "dir" not in tmp_listing and shm == [] and own == ["main.py"]
    assert second.stdout.splitlines()[1:] == ["False False", "True"]


def test_a_concurrent_sibling_is_invisible() -> None:
    """A sleeping program holds a secret in its scratch dir, /tmp and /dev/shm, and listens on loopback; another one,
    told the secret's path, finds none of it, nor the sibling's processes."""
    holder = textwrap.dedent("""
        import os, socket, time
        open("secret.txt", "w").write("sibling secret")
        open("/tmp/secret.txt", "w").write("sibling secret")
        open("/dev/shm/secret.txt", "w").write("sibling secret")
        srv = socket.socket()
        srv.bind(("127.0.0.1", 47123))
        srv.listen(1)
        abstract = socket.socket(socket.AF_UNIX)
        abstract.bind(b"\\0evoarena-sibling")
        abstract.listen(1)
        time.sleep(4)
        print("holder done")
    """)
    (worker,) = [w for (_, net), w in worker_mod._WORKERS.items() if not net] or [None]
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(warm, holder, limits=SandboxLimits(wall_s=20.0))
        deadline = time.monotonic() + 10
        secret = None
        while secret is None and time.monotonic() < deadline:
            (worker,) = [w for (_, net), w in worker_mod._WORKERS.items() if not net]
            found = list(Path(worker.root).glob("*/secret.txt"))
            secret = str(found[0]) if found else None
            time.sleep(0.02)
        assert secret is not None, "the holder never wrote its secret"
        probe = textwrap.dedent(f"""
            import os, socket
            path = {secret!r}
            for target in (path, os.path.dirname(path), "/tmp/secret.txt", "/dev/shm/secret.txt"):
                print(target == path or target == os.path.dirname(path), os.path.exists(target))
            try:
                print(open(path).read())
            except OSError as exc:
                print("cannot read", type(exc).__name__)
            print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
            for address, family in ((("127.0.0.1", 47123), socket.AF_INET), (b"\\0evoarena-sibling", socket.AF_UNIX)):
                try:
                    socket.socket(family).connect(address)
                    print("CONNECTED")
                except OSError:  # its own network namespace: loopback down, no sibling's abstract socket
                    print("refused")
        """)
        seen = warm(probe)
        holder_res = pending.result(timeout=30)
    assert holder_res.ok() and holder_res.stdout == "holder done\n", holder_res.stderr
    assert seen.ok(), seen.stderr
    lines = seen.stdout.splitlines()
    assert lines[:4] == ["True False", "True False", "False False", "False False"], seen.stdout
    assert lines[4] == "cannot read FileNotFoundError" and "sibling secret" not in seen.stdout
    assert lines[5] == "[1, 2]"  # its own init and itself: no sibling, no server
    assert lines[6:] == ["refused", "refused"]


def test_the_program_holds_no_descriptor_of_the_server() -> None:
    res = warm("import os\nprint(sorted(os.listdir('/proc/self/fd')))\nprint(os.getpgrp() == os.getpid() == 2)")
    assert res.ok() and res.stdout == "['0', '1', '2', '3']\nTrue\n", res.stdout  # 3: the listing's own


HOST = textwrap.dedent("""
    import sys
    from evoarena.sandbox import SandboxLimits
    from evoarena.sandbox.runner import run_with
    run_with("bwrap", "import time\\nprint('running', flush=True)\\ntime.sleep(120)",
             limits=SandboxLimits(wall_s=120.0, cpu_s=120), warm=True)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_the_worker_dies_with_a_killed_host() -> None:
    """Not only the program (tests/security/test_sandbox_host_death.py): the launcher, bubblewrap and the server."""
    host = subprocess.Popen([sys.executable, "-c", HOST])
    mark = f"evoarena-sb-{host.pid}-warm-"

    def worker_procs() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            if any(mark in arg for arg in proc.info.get("cmdline") or []) and \
                    proc.info.get("status") != psutil.STATUS_ZOMBIE:
                found.append(proc)
        return found

    try:
        deadline = time.monotonic() + 30
        while len(worker_procs()) < 2 and time.monotonic() < deadline:  # the launcher and bubblewrap
            time.sleep(0.05)
        started = worker_procs()
        assert len(started) >= 2, "the warm worker never started"
        server_tree = [c for p in started for c in p.children(recursive=True)]
        os.kill(host.pid, signal.SIGKILL)
        host.wait()
        deadline = time.monotonic() + 5
        while (alive := [p for p in [*started, *server_tree] if _running(p)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert alive == [], "a warm worker process outlived its killed host"
    finally:
        for proc in worker_procs():
            proc.kill()
        if host.poll() is None:
            host.kill()


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
