"""Building the default CLR release: reproducible, and every slot obeys the seed's construction rules."""

from __future__ import annotations

from typing import Any

import pytest

from evoarena.benchmarks.clr import build_release, dump_release, shipped_library
from evoarena.benchmarks.clr.chains import N_TEST_NONMEMBERS, single_attribute_shortcut


@pytest.fixture(scope="module")
def release() -> dict[str, Any]:
    return build_release(0)


def test_release_is_bit_for_bit_reproducible_and_uncertified(release: dict[str, Any]) -> None:
    assert dump_release(release) == dump_release(build_release(0))
    assert dump_release(build_release(1)) != dump_release(release)
    assert release["certified"] is False and "uncertified" in release["evidence_note"]


def test_the_shipped_default_release_is_the_seed_0_build(release: dict[str, Any]) -> None:
    from importlib import resources

    shipped = resources.files("evoarena.benchmarks.clr").joinpath("data").joinpath("release-0.json").read_text("utf-8")
    assert shipped == dump_release(release), (
        "rebuild it: evoarena clr build --out src/evoarena/benchmarks/clr/data/release-0.json"
    )


def test_a_user_domain_file_builds_chains(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    domains = tmp_path / "d.yaml"
    domains.write_text(
        "- id: my_audit\n  name: My audit\n  entity: team\n  entities: [A, B]\n  record: item\n"
        "  base_task: count the items per team\n  fields:\n"
        "    - {name: country, universe: countries, label_noun: list}\n"
        "    - {name: airline, universe: airlines, label_noun: queue}\n"
        "    - {name: language, universe: languages, label_noun: track}\n"
    )
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["clr", "build", "--domains", str(domains), "--out", str(out)])
    assert result.exit_code == 0, result.output
    import json

    rel = json.loads(out.read_text())
    assert [c["domain"] for c in rel["chains"]] == ["my_audit", "my_audit"]


def test_default_release_has_20_chains_over_10_domains_and_80_rules(release: dict[str, Any]) -> None:
    chains = release["chains"]
    assert len(chains) == 20 and len({c["domain"] for c in chains}) == 10
    assert sum(len(c["slots"]) for c in chains) == 80


def test_every_slot_follows_the_construction_rules(release: dict[str, Any]) -> None:
    lib = shipped_library()
    for chain in release["chains"]:
        seen: set[str] = set()
        labels = [s["label"] for s in chain["slots"]]
        assert len(set(labels)) == len(labels)
        for s in chain["slots"]:
            roster = lib.rosters[s["class_id"]]
            members = [s["example"], *s["members"]]
            nonmembers = [s["practice_nonmember"], *s["test_nonmembers"]]
            assert len(s["members"]) == 3 and len(s["test_nonmembers"]) == N_TEST_NONMEMBERS
            assert set(members) <= roster.members and not set(nonmembers) & roster.members
            assert len(lib.competitors(roster, s["example"])) >= 2  # the example lies in >= 2 other lists
            competing = {v for c in lib.competitors(roster, s["example"]) for v in c.members}
            assert set(nonmembers) <= competing  # look-alikes from rosters that also contain the example
            pool = set(members + nonmembers)
            assert not pool & seen, "value pools must be disjoint across a chain's layers"
            seen |= pool
            assert single_attribute_shortcut(members, nonmembers, s["descriptions"]) is None
            for other in chain["slots"]:  # no rule's values are claimed by another rule on the same field
                if other is not s and other["field"] == s["field"]:
                    assert not set(members + nonmembers) & lib.rosters[other["class_id"]].members
            assert roster.name not in s["label"] and all(a not in s["label"] for a in roster.aliases)
