"""Performance benchmark: `evoarena view` on a large run. A real run of the `files` benchmark (frozen + reflexion on
perf/scale.py's scripted player) at a small and a large task count, its ledger padded with copies of its own
calls to a target row count; then every page of the viewer is fetched (in process, Starlette's TestClient: server
time, rendering included) cold and warm. Reported per page: seconds at each size and the large/small ratio (the
baseline is the same page on the small run, in the same process). The issue's target: 10k tasks and 100k calls open
in under 2 s. The last cell's lineage is grown to a version count (a seeded random tree, each version one line away
from its parent), so the lineage and version pages are timed on a search-sized tree too.

Usage: python perf/viewer.py [--tasks 1000,10000] [--calls 10000,100000] [--versions 100,3000] [--smoke]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import spec, write_tasks  # noqa: E402 - the benchmark's own sibling

from evoarena.harness import Manifest, load_tree, save_version  # noqa: E402
from evoarena.models import ResponseCache  # noqa: E402
from evoarena.protocol.run.runner import run_experiment  # noqa: E402
from evoarena.store import RunStore  # noqa: E402

PAGES = ["/", "/run/{run}", "/run/{run}/conditions", "/run/{run}/curves", "/run/{run}/lineage",
         "/run/{run}/version/{cell}/{version}", "/run/{run}/tasks", "/run/{run}/tasks?page=50",
         "/run/{run}/attempt/{attempt}", "/run/{run}/ledger", "/run/{run}/ledger?role=reflector",
         "/run/{run}/call/{call}"]


def make_run(root: Path, tasks: int, calls: int) -> Path:
    """A finished run of `tasks` tasks whose ledger holds at least `calls` rows (copies of its own rows)."""
    write_tasks(root / "tasks.jsonl", tasks)
    run = root / "run"
    run_experiment(spec(root / "tasks.jsonl"), run, cache=ResponseCache(root / "cache.sqlite"),  # type: ignore[arg-type]
                   probe=False)
    with sqlite3.connect(run / "run.sqlite") as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(calls)") if r[1] != "id"]
        have = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        while have < calls:
            conn.execute(f"INSERT INTO calls ({', '.join(cols)}) SELECT {', '.join(cols)} FROM calls "
                         f"LIMIT {calls - have}")
            have = conn.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    return run


def grow_lineage(run: Path, versions: int) -> int:
    """Add versions to the last cell until it holds `versions`: each a child of a random earlier one (seed 0), its
    tree the parent's with one line appended. Returns the cell's version count."""
    store = RunStore(run)
    cell = store.query("SELECT cell, current_version FROM cells ORDER BY cell DESC LIMIT 1")[0]
    ids = [r["id"] for r in store.query("SELECT id FROM harness_versions WHERE cell = ?", [cell["cell"]])]
    rng = random.Random(0)
    while len(ids) < versions:
        parent = rng.choice(ids)
        tree = load_tree(store, parent)
        tree["notes.md"] = tree.get("notes.md", "") + f"lesson {len(ids)}\n"
        ids.append(save_version(store, cell["cell"], tree, parents=[parent], method="bench",
                                manifest=Manifest(intent=f"bench {len(ids)}"), step=f"bench/{len(ids)}"))
    store.close()
    return len(ids)


def fill(run: Path) -> dict[str, str]:
    with sqlite3.connect(run / "run.sqlite") as conn:
        cell, version = conn.execute("SELECT cell, current_version FROM cells ORDER BY cell DESC LIMIT 1").fetchone()
        attempt = conn.execute("SELECT MAX(id) FROM attempts").fetchone()[0]
        call = conn.execute("SELECT MAX(id) FROM calls WHERE request_blob IS NOT NULL").fetchone()[0]
    return {"run": "run", "cell": cell, "version": version, "attempt": str(attempt), "call": str(call)}


def time_pages(run: Path) -> dict[str, tuple[float, float, int]]:
    """Per page: (cold seconds, warm seconds, status)."""
    from starlette.testclient import TestClient

    from evoarena.viewer import create_app

    params = fill(run)
    out: dict[str, tuple[float, float, int]] = {}
    with TestClient(create_app([run])) as client:
        for template in PAGES:
            url = template.format(**params)
            times = []
            status = 0
            for _ in range(2):
                start = time.perf_counter()
                status = client.get(url).status_code
                times.append(time.perf_counter() - start)
            out[template] = (times[0], times[1], status)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="1000,10000")
    ap.add_argument("--calls", default="10000,100000")
    ap.add_argument("--versions", default="100,3000", help="harness versions in the last cell's lineage")
    ap.add_argument("--smoke", action="store_true", help="200/400 tasks, 1k/2k calls, 50/200 versions")
    args = ap.parse_args()
    tasks = [200, 400] if args.smoke else [int(x) for x in args.tasks.split(",")]
    calls = [1000, 2000] if args.smoke else [int(x) for x in args.calls.split(",")]
    versions = [50, 200] if args.smoke else [int(x) for x in args.versions.split(",")]
    results = []
    for n, m, v in zip(tasks, calls, versions, strict=True):
        with tempfile.TemporaryDirectory() as name:
            start = time.perf_counter()
            run = make_run(Path(name), n, m)
            have = grow_lineage(run, v)
            print(f"made a run of {n} tasks, {m} calls, {have} versions in one cell in "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
            results.append(time_pages(run))
    small, large = results[0], results[-1]
    print(f"{'page':<42}{'small cold':>11}{'warm':>8}{'large cold':>12}{'warm':>8}{'ratio':>7}  status")
    for page in PAGES:
        (sc, sw, _), (lc, lw, status) = small[page], large[page]
        flag = "" if lc < 2.0 else "  > 2 s"
        print(f"{page:<42}{sc:>11.3f}{sw:>8.3f}{lc:>12.3f}{lw:>8.3f}{lc / max(sc, 1e-6):>7.1f}  {status}{flag}")


if __name__ == "__main__":
    main()
