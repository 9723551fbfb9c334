"""`evoarena clr …`: build and certify CLR-Bench releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import fail, out
from evoarena.spec import SpecError, load_spec
from evoarena.store import RunStore
from evoarena.wording import unknown

clr_app = typer.Typer(no_args_is_help=True, help="CLR-Bench: build (and, later, certify) releases.")


@clr_app.command("build")
def clr_build(
    dest: Annotated[Path, typer.Option("--out", help="Where to write the release JSON.")] = Path("clr-release.json"),
    seed: Annotated[int, typer.Option(min=0, help="The release's seed.")] = 0,
    chains_per_domain: Annotated[int, typer.Option(min=1, help="Rule chains drawn per domain.")] = 2,
    domains: Annotated[Path | None, typer.Option(help="Your own domains YAML (format: clr/data/domains.yaml).")] = None,
) -> None:
    """Build an (uncertified) CLR release from the shipped roster library and domains (or yours)."""
    from evoarena.benchmarks.clr import LibraryError, build_release, dump_release, parse_domains, shipped_library

    try:
        doms = parse_domains(domains.read_text("utf-8"), shipped_library()) if domains else None
        release = build_release(seed, chains_per_domain=chains_per_domain, domains=doms)
    except (LibraryError, OSError, KeyError, TypeError) as e:
        fail(str(e))
        return
    if dest.is_dir() or not dest.suffix:  # a directory: the release goes in as release-<seed>.json
        dest.mkdir(parents=True, exist_ok=True)
        dest = dest / f"release-{seed}.json"
    dest.write_text(dump_release(release), encoding="utf-8")
    n, n_domains = len(release["chains"]), len(release["domains"])
    out.print(f"wrote {dest}: {n} chains, {n_domains} domains, {n * release['layers']} rules — [bold]uncertified[/]")


@clr_app.command("certify")
def clr_certify(
    spec_path: Annotated[Path, typer.Argument(help="A spec whose `models` holds the model to certify against.")],
    model: Annotated[str, typer.Option(help="Key of the model in the spec's `models`.")],
    release_path: Annotated[
        Path | None, typer.Option("--release", help="Release JSON (default: build seed 0).")
    ] = None,
    dest: Annotated[Path, typer.Option("--out", help="Where to write the certified release.")] = Path(
        "clr-release.cert.json"
    ),
    replace: Annotated[
        bool, typer.Option(help="Redraw failing slots (seed 003: failed candidates are replaced).")
    ] = True,
    run_dir: Annotated[Path, typer.Option(help="Run store for the probes' ledger.")] = Path("runs/clr-certify"),
) -> None:
    """Run the four probes (Known, Hidden, Learnable, Solvable) against MODEL and write a certified release."""
    from evoarena.benchmarks.clr import build_release, certify_release, dump_release, shipped_library
    from evoarena.models import CallScope, ResponseCache, RoleModel
    from evoarena.protocol import catalog

    try:
        spec = load_spec(spec_path)
    except SpecError as e:
        fail(str(e))
        return
    if model not in spec.models:
        fail(f"--model: {unknown('model', model, sorted(spec.models))}")
    try:
        backend = catalog.backend_of(spec, model)
    except SpecError as e:
        fail(str(e))
        return
    release = json.loads(release_path.read_text("utf-8")) if release_path else build_release(0)
    mspec = spec.models[model]
    certifier = RoleModel(
        role="certifier",
        model_name=model,
        backend=backend,
        spec=mspec,
        store=RunStore(run_dir),
        cache=ResponseCache(),
    ).scoped(CallScope(phase="certify"))
    certified = certify_release(release, shipped_library(), certifier, replace=replace)
    dest.write_text(dump_release(certified), encoding="utf-8")
    failed = len(certified["certification"]["failed"])
    out.print(
        f"wrote {dest}: certified={certified['certified']} ({failed} slot(s) failed) against {mspec.backend}:{model}"
    )
