"""`evoarena view [RUN_DIR…|RUNS_ROOT]`: the run viewer (`evoarena.viewer`) on 127.0.0.1 until Ctrl-C. Stores are
opened read-only, so it can watch a run that is writing."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import err, fail, out

DEFAULT_PORT = 8765


def view(
    paths: Annotated[list[Path] | None, typer.Argument(help="Run directories, or a folder holding them (default: runs)"
                                                       )] = None,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1")] = DEFAULT_PORT,
    host: Annotated[str, typer.Option(help="Address to listen on; anything but loopback shows your runs to the "
                                           "network")] = "127.0.0.1",
) -> None:
    """Browse runs in a web page: runs, conditions, lineage with diffs, tasks, traces, the ledger and curves."""
    import uvicorn

    from evoarena.viewer import create_app, find_runs

    roots = paths or [Path("runs")]
    missing = [p for p in roots if not p.exists()]
    if missing:
        fail(f"no such directory: {', '.join(map(str, missing))}")
    found = [r for p in roots for r in find_runs(p)]
    if not _loopback(host):
        err.print(f"[yellow]warning:[/] listening on {host}: anyone who reaches it can read these runs")
    out.print(f"evoarena view: {len(found)} run(s) under {', '.join(map(str, roots))} → http://{host}:{port}/")
    uvicorn.run(create_app(list(roots)), host=host, port=port, log_level="warning")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
