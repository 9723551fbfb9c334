"""search/ sits on the lowest floor: it imports nothing of evoarena outside itself."""

from __future__ import annotations

import ast
from pathlib import Path

SEARCH = Path(__file__).resolve().parents[2] / "src" / "evoarena" / "search"


def test_search_imports_only_itself_and_the_standard_library() -> None:
    outside = []
    for path in sorted(SEARCH.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.name}: relative import"
                names = [node.module or ""]
            outside += [f"{path.name}: {n}" for n in names if n.startswith("evoarena") and
                        not n.startswith("evoarena.search")]
    assert not outside


def test_the_public_api_is_curated() -> None:
    import evoarena.search as search

    assert sorted(search.__all__) == search.__all__ and all(hasattr(search, n) for n in search.__all__)
