"""The runs `evoarena view` shows: run directories given on the command line, or found under a runs root (to two
levels), each opened read-only on first use and kept open (a reader beside a writing run sees every commit)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from evoarena.store import DB_NAME, RunStore


class UnknownRun(KeyError):
    """No run of that id is being viewed."""


@dataclass(frozen=True)
class RunEntry:
    id: str  # the URL's name for it: the directory's name, made unique
    path: Path


class RunCatalog:
    def __init__(self, paths: list[Path]) -> None:
        self.paths = [Path(p) for p in paths]
        self._stores: dict[str, RunStore] = {}
        self._lock = threading.Lock()

    def entries(self) -> list[RunEntry]:
        """Every run directory, found afresh (a run started after the viewer appears on the next load)."""
        found: list[Path] = []
        for path in self.paths:
            found.extend(find_runs(path))
        out: list[RunEntry] = []
        seen: set[str] = set()
        for path in sorted(dict.fromkeys(p.resolve() for p in found)):
            name, n = path.name, 2
            while name in seen:
                name, n = f"{path.name}-{n}", n + 1
            seen.add(name)
            out.append(RunEntry(name, path))
        return out

    def entry(self, run_id: str) -> RunEntry:
        for e in self.entries():
            if e.id == run_id:
                return e
        raise UnknownRun(run_id)

    def store(self, run_id: str) -> RunStore:
        """The run's store, opened on first use (the runs root is walked only then)."""
        with self._lock:
            if run_id not in self._stores:
                self._stores[run_id] = RunStore.open_existing(self.entry(run_id).path, read_only=True)
            return self._stores[run_id]

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()


def find_runs(path: Path, depth: int = 2) -> list[Path]:
    """`path` itself when it is a run directory, else the run directories under it (to `depth` levels)."""
    if (path / DB_NAME).is_file():
        return [path]
    if depth == 0 or not path.is_dir():
        return []
    out: list[Path] = []
    for child in sorted(path.iterdir()):
        if child.is_dir() and not child.name.startswith("."):
            out.extend(find_runs(child, depth - 1))
    return out
