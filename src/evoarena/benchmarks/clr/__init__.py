"""CLR-Bench (work in progress): a curriculum of latent rules over public named groupings (seed 003)."""

from evoarena.benchmarks.clr import report_view  # noqa: F401  (registers the "clr" report view)
from evoarena.benchmarks.clr.certify import CertifyConfig, certify_release, lesson_text
from evoarena.benchmarks.clr.chains import Chain, Slot, draw_chain
from evoarena.benchmarks.clr.domains import Domain, TrapField, parse_domains
from evoarena.benchmarks.clr.library import Library, LibraryError, Roster, Universe, shipped_library
from evoarena.benchmarks.clr.release import build_release, dump_release

__all__ = [
    "CertifyConfig",
    "certify_release",
    "lesson_text",
    "Chain",
    "Domain",
    "Library",
    "LibraryError",
    "Roster",
    "Slot",
    "TrapField",
    "Universe",
    "build_release",
    "draw_chain",
    "dump_release",
    "parse_domains",
    "shipped_library",
]
