"""Building a CLR release (all chains of all domains) reproducibly from a seed."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from evoarena.benchmarks.clr.chains import LAYERS, draw_chain
from evoarena.benchmarks.clr.domains import Domain, parse_domains, shipped_domains_text
from evoarena.benchmarks.clr.library import Library, shipped_library
from evoarena.codec import to_plain

RELEASE_FORMAT = 1


def library_digest(lib: Library) -> str:
    blob = json.dumps(
        {
            "universes": {u.id: u.values for u in lib.universes.values()},
            "rosters": {r.id: sorted(r.members) for r in lib.rosters.values()},
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def build_release(
    seed: int = 0, *, chains_per_domain: int = 2, library: Library | None = None, domains: list[Domain] | None = None
) -> dict[str, Any]:
    """The default release is 20 chains over 10 domains (80 hidden rules). A build made without a model is
    `uncertified`: the probes of seed 003 §4.2 have not been run against any model."""
    lib = library or shipped_library()
    doms = domains or parse_domains(shipped_domains_text(), lib)
    used: set[str] = set()
    chains = [to_plain(draw_chain(lib, d, i, seed, used)) for d in doms for i in range(chains_per_domain)]
    return {
        "format": RELEASE_FORMAT,
        "seed": seed,
        "certified": False,
        "certification": None,
        "evidence_note": "uncertified: no probe was run against a model",
        "library_sha256": library_digest(lib),
        "layers": LAYERS,
        "domains": [d.id for d in doms],
        "chains": chains,
    }


def dump_release(release: dict[str, Any]) -> str:
    """Canonical JSON: the same seed and library give the same bytes."""
    return json.dumps(release, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
