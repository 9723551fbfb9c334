"""A harness directory holding what no version may hold — a FIFO, a device, a socket, a symlink, a sparse 300 MiB
file, bytes that are not UTF-8, a name with a lone surrogate, a path longer than the OS allows — and versions
proposed with such names or with `..` or absolute names. Reading or saving each is a one-line error naming the
file (and, for a version, the cell, the step and the version it came from), before anything is read or stored;
none hangs, none is a bare codec error or a raw OSError."""

from __future__ import annotations

import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from harness_planters import release, within
from unprivileged import as_unprivileged

from evoarena.harness import HarnessFileError, HarnessPathError, HarnessWorkspace, Manifest, save_version, tree_hash
from evoarena.harness import files as harness_files
from evoarena.spec import HarnessLimits, SpecError, parse_spec
from evoarena.store import RunStore

SMALL = HarnessLimits(max_file_bytes=1000, max_tree_bytes=2500, max_entries=6)


def _one_line(err: pytest.ExceptionInfo[BaseException], *names: str) -> str:
    text = str(err.value)
    assert "\n" not in text and len(text) < 400
    for name in names:
        assert name in text
    return text


def _ws(tmp_path: Path, limits: HarnessLimits | None = None) -> HarnessWorkspace:
    ws = HarnessWorkspace(tmp_path / "h", limits)
    ws.write("system.md", "be brief\n")
    return ws


def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    fifo = ws.root / "memory" / "pipe.md"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(HarnessFileError) as err:
        within(10, ws.tree, release(fifo))
    assert _one_line(err, "'memory/pipe.md'", "a FIFO, not a regular file")
    with pytest.raises(FileNotFoundError):  # reading it by name does not open it either
        within(10, lambda: ws.read("memory/pipe.md"), release(fifo))


def test_a_file_swapped_for_a_fifo_after_its_lstat_is_refused_not_waited_on(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The race a method's own process can win: a regular file at lstat, a FIFO at open. It is opened without
    blocking and refused from fstat."""
    ws = _ws(tmp_path)
    fifo = ws.root / "notes.md"
    os.mkfifo(fifo)
    regular = os.lstat(ws.root / "system.md")
    real_lstat = os.lstat
    monkeypatch.setattr(harness_files.os, "lstat", lambda p: regular if str(p) == str(fifo) else real_lstat(p))
    with pytest.raises(HarnessFileError) as err:
        within(10, lambda: harness_files.read_file(fifo, "notes.md", None), release(fifo))
    assert _one_line(err, "'notes.md'", "a FIFO")


def test_a_socket_a_symlink_and_a_device_are_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws.root / "s.sock"))
    sock.close()
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'s.sock'", "a socket")
    os.unlink(ws.root / "s.sock")
    os.symlink("/etc/hostname", ws.root / "link.md")
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'link.md'", "a symlink")
    os.unlink(ws.root / "link.md")
    try:
        os.mknod(ws.root / "null.md", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    except OSError:
        pytest.skip("this user cannot make device nodes")
    with pytest.raises(HarnessFileError) as err:
        within(10, ws.tree)
    assert _one_line(err, "'null.md'", "a character device")


def test_a_sparse_300_mib_file_is_refused_from_its_size_unread(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _ws(tmp_path, HarnessLimits())
    with open(ws.root / "big.md", "wb") as fh:
        fh.truncate(300 * 2**20)  # sparse: no disk is used
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(harness_files.os, "open", lambda p, *a: opened.append(str(p)) or real_open(p, *a))
    start = time.monotonic()
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'big.md'", "300.0 MiB", "4.0 MiB per file (protocol.harness.max_file_bytes)")
    assert time.monotonic() - start < 2 and not any(p.endswith("big.md") for p in opened)


def test_the_tree_cap_and_the_entry_cap_are_counted_before_reading(tmp_path: Path) -> None:
    ws = _ws(tmp_path, SMALL)
    for name in ("a.md", "b.md"):
        ws.write(name, "x" * 900)
    ws.write("c.md", "x" * 900)  # each file is within its cap ...
    with pytest.raises(HarnessFileError) as err:
        ws.tree()  # ... the three together are not
    assert _one_line(err, "'c.md'", "protocol.harness.max_tree_bytes")
    with pytest.raises(HarnessFileError, match=r"^'d.md': 1001 bytes, over the cap of 1000 bytes per file"):
        ws.write("d.md", "x" * 1001)  # refused at write time too, before anything is written
    assert not (ws.root / "d.md").exists()
    ws.delete("c.md")
    for d in ("m1", "m2", "m3", "m4"):
        (ws.root / d).mkdir()
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "more than 6 files and directories (protocol.harness.max_entries)")


def test_a_directory_of_many_files_is_refused_naming_it(tmp_path: Path) -> None:
    ws = _ws(tmp_path, SMALL)
    (ws.root / "memory" / "many").mkdir(parents=True)
    for i in range(2000):
        (ws.root / "memory" / "many" / f"{i}.md").touch()
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'memory/many': the tree holds more than 6 files and directories")


def test_bytes_that_are_not_utf8_are_refused_naming_the_file_and_offset(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    (ws.root / "skills").mkdir()
    (ws.root / "skills" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'skills/logo.png'", "not UTF-8 text (byte 0x89 at offset 0)")
    with pytest.raises(HarnessFileError, match="not UTF-8 text"):
        ws.read("skills/logo.png")


def test_a_name_with_a_lone_surrogate_is_refused_on_disk_and_in_writes(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    with open(os.path.join(os.fsencode(ws.root), b"bad\xff.md"), "wb") as fh:
        fh.write(b"text\n")
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'bad\\udcff.md'", "the name is not valid UTF-8")
    with pytest.raises(HarnessPathError, match="the name is not valid UTF-8"):
        ws.write("also\ud800.md", "x")
    with pytest.raises(HarnessFileError, match=r"^'x.md': the text is not valid Unicode"):
        ws.write("x.md", "half \ud800 written")
    assert not (ws.root / "x.md").exists()


def test_a_5000_character_path_is_a_harness_path_error(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    rel = "/".join(["d" * 200] * 25)  # every name and the depth within their caps; the whole path beyond the OS's
    with pytest.raises(HarnessPathError) as err:
        ws.write(rel, "x")
    assert _one_line(err, "a path of at most 1024 bytes (got 5024)")
    assert sorted(p.name for p in ws.root.iterdir()) == ["system.md"]


def test_a_path_longer_than_the_cap_on_disk_is_refused_naming_it(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    fd = os.open(ws.root, os.O_RDONLY)
    try:
        for _ in range(6):  # made relative to each directory, as a method's process can
            os.mkdir("d" * 199, dir_fd=fd)
            fd, old = os.open("d" * 199, os.O_RDONLY, dir_fd=fd), fd
            os.close(old)
    finally:
        os.close(fd)
    with pytest.raises(HarnessFileError) as err:
        ws.tree()
    assert _one_line(err, "'dddd", "a path of at most 1024 bytes (got 1199)")


BAD_VERSIONS = [
    ({"system.md": "x", "../escaped.md": "out"}, "'../escaped.md': '.' and '..' are refused"),
    ({"system.md": "x", "/tmp/escaped.md": "out"}, "'/tmp/escaped.md': absolute paths are refused"),
    ({"system.md": "x", "skills/./a.md": "y"}, "'skills/./a.md': write it as 'skills/a.md'"),
    ({"skills": "x", "skills/a.md": "y"}, "'skills/a.md': 'skills' is a file in the same tree"),
    ({"a\ud800.md": "x"}, "the name is not valid UTF-8"),
    ({"a.md": "half \ud800"}, "'a.md': the text is not valid Unicode"),
    ({"a.md": "x" * 1001}, "'a.md': 1001 bytes, over the cap of 1000 bytes per file"),
]


@pytest.mark.parametrize(("tree", "expected"), BAD_VERSIONS)
def test_a_version_that_could_not_be_checked_out_is_never_stored(tmp_path: Path, tree: dict[str, str],
                                                                 expected: str) -> None:
    store = RunStore(tmp_path / "run")
    with pytest.raises(HarnessPathError) as err:
        save_version(store, "c0", tree, parents=["0123456789abcdef"], method="m",
                     manifest=Manifest(), step="practice/e0/0001/t1", limits=SMALL)
    text = _one_line(err, expected)
    assert text.startswith("cell c0, step practice/e0/0001/t1, version after 0123456789ab: ")
    assert store.query("SELECT id FROM harness_versions") == []
    assert not [p for p in store.blobs.root.rglob("*") if p.is_file()]


def test_hashing_a_tree_that_utf8_cannot_hold_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(HarnessFileError, match=r"^'notes.md': the text is not valid Unicode"):
        tree_hash({"system.md": "x", "notes.md": "lone \udc80"})


def test_the_caps_are_checked_in_the_spec_and_leave_the_hash_alone(make_spec: Any) -> None:
    base = make_spec()
    assert base.spec_hash() == "bbb0cb006028f72feb3475f1ba4257c6fe23db3e3d9eb9a503f54cdd33e725a8"  # as before caps
    raised = make_spec(protocol={"harness": {"max_file_bytes": 8 * 2**20}})
    assert raised.protocol.harness.max_file_bytes == 8 * 2**20 and raised.spec_hash() == base.spec_hash()
    for field in ("max_file_bytes", "max_tree_bytes", "max_entries"):
        with pytest.raises(SpecError, match=rf"^protocol.harness.{field}: must be at least"):
            make_spec(protocol={"harness": {field: 0}})
    with pytest.raises(SpecError, match=r"^protocol.harness.max_file_byte: unknown field — did you mean "
                                        r"'max_file_bytes'\?"):
        parse_spec({**make_spec().model_dump(mode="json"), "protocol": {"harness": {"max_file_byte": 1}}})


def test_checkout_and_export_refuse_a_bad_version_an_older_run_stored(tmp_path: Path, make_spec: Any) -> None:
    """A run written before versions were checked may hold `..` in a version: `checkout` and `export` refuse it in
    one line naming the version, before anything is written (they wrote up to it, then raised a traceback)."""
    import json

    from typer.testing import CliRunner

    from evoarena.cli import app
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.store.versions import insert_version

    run_dir = tmp_path / "run"
    run_experiment(make_spec(methods=[{"name": "frozen"}]), run_dir, probe=False)
    store = RunStore(run_dir)
    cell = store.cells()[0]["cell"]
    blob = store.blobs.put(json.dumps({"a.md": "in", "../escaped.md": "out"}))
    insert_version(store, version_id="badbadbadbad" + "0" * 52, cell=cell, parents=[], method="frozen",
                   manifest_json="{}", tree_blob=blob, step="old")
    store.close()
    for dest, args in (("co", ["checkout", str(run_dir), "badbad", str(tmp_path / "co")]),
                       ("ex", ["export", str(run_dir), str(tmp_path / "ex"), "--as", "files", "--version", "badbad"])):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and "version badbadbadbad" in lines[0] and "'../escaped.md'" in lines[0], lines
        assert not (tmp_path / dest).exists() and not (tmp_path / "escaped.md").exists()


LOCKED = """
import json, os, tempfile
from evoarena.harness import HarnessPathError, HarnessWorkspace
ws = HarnessWorkspace(tempfile.mkdtemp(prefix="evoarena-locked-"))
ws.write("locked/x.md", "x")
out = {}
os.chmod(ws.root / "locked", 0o500)  # what a method's process may leave: a directory it cannot be emptied of
try:
    ws.replace_all({})
except HarnessPathError as err:
    out["replace_all"] = str(err)
os.chmod(ws.root / "locked", 0o000)
try:
    ws.tree()
except HarnessPathError as err:
    out["tree"] = str(err)
os.chmod(ws.root / "locked", 0o700)
ws.replace_all({})
os.rmdir(ws.root)
print(json.dumps(out))
"""


def test_a_directory_a_method_locked_fails_in_one_line_naming_it() -> None:
    """Only an unprivileged user sees it (root ignores modes), so it runs as `nobody` when the tests run as root."""
    import json
    import subprocess
    import sys

    done = subprocess.run([*as_unprivileged(), sys.executable, "-c", LOCKED], capture_output=True, text=True,
                          timeout=60, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"}, cwd="/tmp")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "replace_all": "'locked/x.md': cannot be removed (Permission denied)",
        "tree": "'locked': cannot be listed (Permission denied)"}
