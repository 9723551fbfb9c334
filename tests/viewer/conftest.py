"""Fixtures of the viewer's tests: a scripted run the tests make, the viewer serving it on 127.0.0.1 (uvicorn in a
thread), and headless Chromium from Debian's packages (`/usr/bin/chromium`) driven by Playwright."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_server import Server

from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import load_spec

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
CHROMIUM = os.environ.get("EVOARENA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs folder with the scripted arith-basics run (three conditions, a reflexion lineage) in it."""
    root = tmp_path_factory.mktemp("view-runs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOARENA_CACHE_DIR", str(root.parent / "view-cache"))
        run_experiment(load_spec(RECIPES / "arith-basics.yaml").with_model("scripted"), root / "arith-basics",
                       probe=False)
    return root


@pytest.fixture(scope="session")
def viewer(runs_root: Path) -> Iterator[Server]:
    with Server([runs_root]) as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).is_file():
        missing = f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium; `make test` installs it as root)"
        if os.environ.get("EVOARENA_REQUIRE_BROWSER"):  # CI: the browser tests must run
            pytest.fail(missing)
        pytest.skip(missing)
    from playwright import sync_api
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert errors == [], f"JavaScript errors on the page: {errors}"


@pytest.fixture
def shoot(tmp_path: Path) -> Any:
    """`shoot(page, name)`: a full-page screenshot, into docs/viewer/NAME.png when EVOARENA_SCREENSHOTS=1 (how the
    pictures in docs/viewer.md are made), else into the test's tmp directory (so every run still takes it)."""
    docs = Path(__file__).resolve().parents[2] / "docs" / "viewer"

    def take(pg: Any, name: str) -> Path:
        folder = docs if os.environ.get("EVOARENA_SCREENSHOTS") else tmp_path
        folder.mkdir(parents=True, exist_ok=True)
        out = folder / f"{name}.png"
        pg.screenshot(path=str(out), full_page=True)
        assert out.stat().st_size > 1000
        return out

    return take
