"""A version links to the update calls that proposed it, in a real browser: on arith-basics' reflexion cell every
version made at a practice step lists exactly the store's non-solver calls of that step, a click opens the call page,
and the call page links back to the version; node labels keep the epoch of their step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from view_server import Server

from evoarena.store import RunStore

CELL = "reflexion__scripted__s0"


def test_a_version_links_to_the_calls_that_made_it_and_back(viewer: Server, runs_root: Path, page: Any) -> None:
    store = RunStore(runs_root / "arith-basics", read_only=True)
    versions = store.query("SELECT id, step FROM harness_versions WHERE cell=? AND step != 'init'", [CELL])
    expected = {str(v["id"]): [int(r["id"]) for r in store.query(
        "SELECT id FROM calls WHERE cell=? AND unit=? AND role != 'solver' ORDER BY id", [CELL, v["step"]])]
        for v in versions}
    steps = {str(v["id"]): str(v["step"]) for v in versions}
    store.close()
    assert expected and all(expected.values())
    page.goto(f"{viewer.url}/run/arith-basics/lineage?cell={CELL}")
    for vid, calls in expected.items():
        links = page.locator(f"#versions tr[data-version='{vid}'] a.made-by")
        assert [int(x) for x in links.evaluate_all("ls => ls.map(l => l.dataset.call)")] == calls
        label = page.locator(f"#lineage-svg a.node[data-version='{vid}'] text.step").text_content()
        assert label == steps[vid].split("/", 1)[1] and label.startswith("e0/")  # the epoch is kept
    vid, calls = next(iter(expected.items()))
    with page.expect_navigation():
        page.locator(f"#versions tr[data-version='{vid}'] a.made-by").first.click()
    assert page.url.endswith(f"/call/{calls[0]}")
    assert "reflector" in page.locator("h1").inner_text()
    with page.expect_navigation():
        page.locator(f"#made-versions a[data-version='{vid}']").click()
    assert page.locator("#version-id").inner_text() == vid
    assert page.locator("#made-by a.made-by").count() == len(calls)
