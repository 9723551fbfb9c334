"""The params tables of the docs are generated from the `Params` models: each page holds a marked block
(`<!-- params: method gepa -->` … `<!-- /params -->`) that must equal the table `params_table` writes today.
`EVOARENA_WRITE_DOCS=1 pytest tests/test_params_doc.py` rewrites the blocks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from evoarena.api.params import params_table
from evoarena.protocol import catalog

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"(<!-- params: (method|benchmark) ([\w.]+) -->\n)(.*?)(<!-- /params -->)", re.S)
PAGES = {("benchmark", "files"): DOCS / "own-tasks.md"}
"""Where a name's table lives when it is not docs/<kind>s/<name>.md."""


def _page(kind: str, name: str) -> Path:
    return PAGES.get((kind, name), DOCS / f"{kind}s" / f"{name}.md")


def _blocks() -> list[tuple[Path, str, str]]:
    found = []
    for path in sorted(DOCS.rglob("*.md")):
        found += [(path, m.group(2), m.group(3)) for m in BLOCK.finditer(path.read_text("utf-8"))]
    return found


def _regenerate(path: Path) -> str:
    def table(m: re.Match[str]) -> str:
        cls = catalog.method_class(m.group(3)) if m.group(2) == "method" else catalog.benchmark_class(m.group(3))
        return f"{m.group(1)}{params_table(cls.Params)}{m.group(5)}"

    return BLOCK.sub(table, path.read_text("utf-8"))


@pytest.mark.parametrize("path", sorted({p for p, _, _ in _blocks()}), ids=lambda p: p.name)
def test_each_params_block_is_the_table_of_its_model(path: Path) -> None:
    fresh = _regenerate(path)
    if os.environ.get("EVOARENA_WRITE_DOCS"):
        path.write_text(fresh, "utf-8")
    assert path.read_text("utf-8") == fresh, f"{path.name}: run EVOARENA_WRITE_DOCS=1 pytest {__file__}"


@pytest.mark.parametrize("kind", ["method", "benchmark"])
def test_every_method_and_benchmark_with_a_page_shows_its_params_there(kind: str) -> None:
    shown = {(path, k, name) for path, k, name in _blocks()}
    for e in catalog.entries(kind):  # type: ignore[arg-type]
        page = _page(kind, e.name)
        if page.exists():
            assert (page, kind, e.name) in shown, f"{page} has no params block for {e.name}"
