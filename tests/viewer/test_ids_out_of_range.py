"""Every int the viewer reads from a URL — a path's row id, a query's page, offset or keyset bound — past what SQLite's
integers hold is a 404 page, never a server error; numbers in range still serve."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from evoarena.viewer import create_app

BIG = "9" * 20  # past 2**63 - 1


@pytest.fixture(scope="module")
def client(runs_root: Path) -> TestClient:
    return TestClient(create_app([runs_root]), raise_server_exceptions=False)


@pytest.mark.parametrize("url", [
    f"/run/arith-basics/attempt/{BIG}",
    f"/run/arith-basics/attempt/-{BIG}",
    f"/run/arith-basics/call/{BIG}",
    "/run/arith-basics/attempt/9223372036854775808",
    f"/run/arith-basics/ledger?before={BIG}",
    f"/run/arith-basics/ledger?after=-{BIG}",
    f"/run/arith-basics/ledger?size={BIG}",
    f"/run/arith-basics/tasks?page={BIG}",
    "/run/arith-basics/tasks?page=999999999999999999",  # in range, but its offset is not
    f"/run/arith-basics/tasks?size={BIG}",
    f"/run/arith-basics/lineage?events={BIG}",
])
def test_an_int_out_of_range_is_a_404(client: TestClient, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 404
    assert "out of range" in response.text or "no page" in response.text


@pytest.mark.parametrize("url", [
    "/run/arith-basics/attempt/1",
    "/run/arith-basics/ledger?before=9223372036854775807",
    "/run/arith-basics/ledger?before=abc",  # not a number: ignored, as before
    "/run/arith-basics/lineage?events=9223372036854775807",
    "/run/arith-basics/tasks?page=2",
])
def test_an_int_in_range_still_serves(client: TestClient, url: str) -> None:
    assert client.get(url).status_code == 200


def test_an_id_in_range_that_no_row_has_is_a_404(client: TestClient) -> None:
    assert client.get("/run/arith-basics/attempt/9223372036854775807").status_code == 404
