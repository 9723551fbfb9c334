"""CLR probe certification, checked with scripted policies (evidence: mechanism, not a real model).

The policies read the probe prompt like a model would; the ones that "know" a class are told it out of band
(TRUTH, keyed by label and example), since a scripted policy has no world knowledge.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import policy
from evoarena.benchmarks.clr import build_release, parse_domains, shipped_library
from evoarena.benchmarks.clr import certify as cert
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import shipped_domains_text
from evoarena.benchmarks.clr.library import Library, Roster
from evoarena.benchmarks.clr.release import dump_release
from evoarena.codec import from_plain
from evoarena.models import GenParams, Message, RoleModel, ScriptedBackend
from evoarena.protocol import catalog
from evoarena.spec import ModelSpec
from evoarena.store import RunStore

TRUTH: dict[tuple[str, str], Roster] = {}
REFUSE: set[str] = set()  # classes the learner policy knows nothing about


def read(messages: Sequence[Message]) -> dict[str, Any]:
    text = messages[-1].content
    label = re.search(r"^Label: (.+)$", text, re.M).group(1)  # type: ignore[union-attr]
    example = re.search(rf"^Example: (.+?) belongs to {re.escape(label)}\. \(", text, re.M).group(1)  # type: ignore[union-attr]
    block = text.split("\nValues:\n", 1)[1].split("\n\n", 1)[0]
    return {
        "label": label,
        "example": example,
        "values": [ln[2:] for ln in block.splitlines() if ln.startswith("- ")],
        "confirmed": re.findall(rf"^- (.+) belongs to {re.escape(label)}, like", text, re.M),
        "lesson": cert.CONVENTION in text,
    }


def reply(grouping: str, values: list[str], yes: set[str]) -> str:
    return "\n".join([f"GROUPING: {grouping}", *(f"{v}: {'yes' if v in yes else 'no'}" for v in values)])


@policy("clr-cert-oracle")
def oracle(messages: Sequence[Message], params: GenParams) -> str:
    """Knows the class from the example alone and names it, whatever it is shown."""
    p = read(messages)
    roster = TRUTH[(p["label"], p["example"])]
    return reply(roster.name, p["values"], set(roster.members))


@policy("clr-cert-blank")
def blank(messages: Sequence[Message], params: GenParams) -> str:
    return reply("unknown", read(messages)["values"], set())


@policy("clr-cert-revealed-only")
def revealed_only(messages: Sequence[Message], params: GenParams) -> str:
    """An exception list: marks exactly the members the feedback confirmed."""
    p = read(messages)
    return reply("unknown", p["values"], set(p["confirmed"]))


@policy("clr-cert-learner")
def learner(messages: Sequence[Message], params: GenParams) -> str:
    """Guesses nothing from the example, half-generalises from feedback alone, and with the lesson gets it."""
    p = read(messages)
    roster = TRUTH[(p["label"], p["example"])]
    if roster.id in REFUSE:
        return reply("unknown", p["values"], set())
    if p["lesson"]:
        return reply(roster.name, p["values"], set(roster.members))
    if p["confirmed"]:
        unseen = sorted(v for v in p["values"] if v in roster.members and v not in p["confirmed"])
        return reply("unknown", p["values"], {*p["confirmed"], unseen[0]})
    return reply("unknown", p["values"], set())


@policy("clr-cert-garbage")
def garbage(messages: Sequence[Message], params: GenParams) -> str:
    return "I think these are probably the members of some alliance.\n- " + read(messages)["values"][0] + ": yes"


@policy("clr-cert-partial")
def partial(messages: Sequence[Message], params: GenParams) -> str:
    """The oracle, but the first listed value is left out."""
    p = read(messages)
    roster = TRUTH[(p["label"], p["example"])]
    return reply(roster.name, p["values"][1:], set(roster.members))


def model_for(tmp_path: Path, policy: str) -> RoleModel:
    return RoleModel(
        role="certifier",
        model_name=policy,
        backend=ScriptedBackend(policy, catalog.policy(policy)),
        spec=ModelSpec(backend="scripted", model=policy),
        store=RunStore(tmp_path / policy),
        cache=None,
    )


@pytest.fixture(scope="module")
def lib() -> Library:
    return shipped_library()


@pytest.fixture(scope="module")
def release(lib: Library) -> dict[str, Any]:
    return build_release(0, chains_per_domain=1, domains=parse_domains(shipped_domains_text(), lib)[:2])


@pytest.fixture()
def slot(release: dict[str, Any], lib: Library) -> Slot:
    s = from_plain(Slot, release["chains"][0]["slots"][0])
    TRUTH[(s.label, s.example)] = lib.rosters[s.class_id]
    return s


@pytest.fixture()
def told_the_truth(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every slot certify_release certifies (replacements included) is made known to the scripted policies."""
    original = cert.certify_slot

    def spy(slot: Slot, roster: Roster, model: RoleModel, config: cert.CertifyConfig | None = None) -> Any:
        TRUTH[(slot.label, slot.example)] = roster
        return original(slot, roster, model, config)

    monkeypatch.setattr(cert, "certify_slot", spy)
    yield
    REFUSE.clear()


def probes(c: cert.SlotCertificate) -> dict[str, cert.ProbeResult]:
    return {p.probe: p for p in c.probes}


def test_lesson_is_a_labelled_reconstruction_that_names_no_class(lib: Library) -> None:
    path = Path(cert.__file__).with_name("lesson.md")
    first = path.read_text("utf-8").splitlines()[0]
    assert first == "# evoarena reconstruction of the CLR-Bench lesson — not the paper's text"
    full = cert.lesson_text()
    assert full.startswith(cert.ORIGINAL_TITLE) and cert.CONVENTION in full and cert.PROCEDURE in full
    assert "well-known, named grouping" in cert.CONVENTION and "chosen to fit the corrections" in cert.CONVENTION
    assert "contains the\nexample and the confirmed members and excludes the rejected values" in cert.CONVENTION
    assert cert.PROCEDURE.startswith("Decide the class behind the example, and apply it to every described value.")
    neutral = cert.lesson_text("UPDATE NOTE")
    assert neutral.startswith("UPDATE NOTE\n") and cert.ORIGINAL_TITLE not in neutral
    assert cert.PROCEDURE not in cert.lesson_text("UPDATE NOTE", procedure=False)
    assert cert.CONVENTION not in cert.lesson_text("UPDATE NOTE", convention=False)
    named = [r.id for r in lib.rosters.values() if cert.names_class(path.read_text("utf-8"), r)]
    assert named == []


def test_replies_are_parsed_strictly_and_never_repaired() -> None:
    values = ["CWE-79: Cross-site Scripting", "Lufthansa", "Air Canada"]
    ok = cert.parse_reply("GROUPING: X\nCWE-79: Cross-site Scripting: YES\nlufthansa: no\n\nAir Canada: yes\n", values)
    assert ok.error is None and ok.grouping == "X"
    assert ok.marks == {"CWE-79: Cross-site Scripting": True, "Lufthansa": False, "Air Canada": True}
    gaps = cert.parse_reply("GROUPING: X\nLufthansa: no\nLufthansa: yes", values)
    assert gaps.error is None and set(gaps.marks.values()) == {None}  # missing, and answered both ways
    for bad in [
        "Lufthansa: no",
        "Sure!\nGROUPING: X",
        "GROUPING: X\n- Lufthansa: no",
        "GROUPING: X\nKLM: no",
        "GROUPING: X\nLufthansa: maybe",
        "GROUPING:",
        "",
    ]:
        rejected = cert.parse_reply(bad, values)
        assert rejected.grouping is None and rejected.error and set(rejected.marks.values()) == {None}, bad


def test_names_class_matches_names_and_aliases_but_not_lowercase_acronyms(lib: Library) -> None:
    star = lib.rosters["star_alliance_founders"]
    assert cert.names_class("the star alliance founding members", star)
    assert not cert.names_class("unknown", star) and not cert.names_class("Stars alliances", star)
    can = next(r for r in lib.rosters.values() if "CAN" in r.aliases)
    assert cert.names_class("CAN", can) and not cert.names_class("I can't tell", can)


def test_a_model_that_knows_the_class_passes_known_and_solvable_but_fails_hidden(
    slot: Slot, lib: Library, tmp_path: Path
) -> None:
    roster = lib.rosters[slot.class_id]
    model = model_for(tmp_path, "clr-cert-oracle")
    full = probes(cert.certify_slot(slot, roster, model, cert.CertifyConfig(stop_early=False)))
    assert full["known"].passed and full["known"].mean_score == 1.0
    assert full["solvable"].passed and full["solvable"].mean_score == 1.0
    assert not full["hidden"].passed and "named the class" in full["hidden"].reason
    assert not full["learnable"].passed and full["learnable"].marked_fraction == 1.0  # it needs no feedback
    early = cert.certify_slot(slot, roster, model_for(tmp_path / "early", "clr-cert-oracle"))
    assert [p.probe for p in early.probes] == ["known", "hidden"] and not early.passed
    assert early.failed_probe == "hidden"
    rows = model.store.query("SELECT role, model_id, cache_key FROM calls")
    assert len(rows) == 12 and {r["model_id"] for r in rows} == {"scripted:clr-cert-oracle"}
    assert len({r["cache_key"] for r in rows}) == 12  # the three rotations of a probe are distinct samples


def test_a_model_that_knows_nothing_fails_known_and_stops(slot: Slot, lib: Library, tmp_path: Path) -> None:
    model = model_for(tmp_path, "clr-cert-blank")
    c = cert.certify_slot(slot, lib.rosters[slot.class_id], model)
    assert [p.probe for p in c.probes] == ["known"] and c.failed_probe == "known"
    known = c.probes[0]
    assert "named the grouping in 0 of 3" in known.reason and known.mean_score == pytest.approx(8 / 11)
    assert [r.revealed for r in known.rotations] == list(slot.members)
    assert len(model.store.query("SELECT id FROM calls")) == 3


def test_an_exception_list_fails_learnable(slot: Slot, lib: Library, tmp_path: Path) -> None:
    model = model_for(tmp_path, "clr-cert-revealed-only")
    res = cert.run_probe("learnable", slot, lib.rosters[slot.class_id], model, cert.CertifyConfig())
    assert not res.passed and res.marked_fraction == 0.0 and "outside" in res.reason
    assert all(r.revealed not in r.wrong and r.unseen_marked == 0 for r in res.rotations)


def test_malformed_replies_count_as_wrong_not_as_crashes(slot: Slot, lib: Library, tmp_path: Path) -> None:
    roster, config = lib.rosters[slot.class_id], cert.CertifyConfig(stop_early=False)
    c = probes(cert.certify_slot(slot, roster, model_for(tmp_path, "clr-cert-garbage"), config))
    assert not any(p.passed for p in c.values())
    for rot in c["known"].rotations:
        assert rot.error and rot.grouping is None and len(rot.unparsed) == 11 and rot.score == 0.0
    assert c["hidden"].marked_fraction == 1.0  # unreadable counts against passing Hidden
    assert c["learnable"].marked_fraction == 0.0
    part = cert.run_probe("known", slot, roster, model_for(tmp_path, "clr-cert-partial"), config)
    first = cert.probe_values(slot)[0][0]
    for rot in part.rotations:
        assert rot.error is None and rot.unparsed == (first,) and rot.wrong == (first,)
    assert part.mean_score == pytest.approx(10 / 11)


def test_certify_release_records_per_slot_results(
    release: dict[str, Any], lib: Library, tmp_path: Path, told_the_truth: None
) -> None:
    model = model_for(tmp_path, "clr-cert-learner")
    out = cert.certify_release(release, lib, model, replace=False, date="2026-01-01")
    assert out["certified"] is True and release["certified"] is False  # the input is not changed
    c = out["certification"]
    assert c["model_id"] == "scripted:clr-cert-learner" and c["date"] == "2026-01-01" and c["failed"] == []
    assert c["config"] == cert.CertifyConfig().model_dump() and len(c["lesson_sha256"]) == 64
    assert len(c["slots"]) == 8 and all(s["passed"] and s["replaced"] == [] for s in c["slots"])
    learn = c["slots"][0]["candidates"][0]["probes"][2]
    assert learn["probe"] == "learnable" and learn["marked_fraction"] == 0.5
    assert out["chains"] == release["chains"] and out["evidence_note"].startswith(
        "probes run with scripted:clr-cert-learner"
    )
    dump_release(out)  # stays JSON


def test_a_failing_slot_is_replaced_deterministically_or_recorded_as_failed(
    release: dict[str, Any], lib: Library, tmp_path: Path, told_the_truth: None
) -> None:
    old = release["chains"][0]["slots"][1]
    REFUSE.add(old["class_id"])
    kept = cert.certify_release(release, lib, model_for(tmp_path, "clr-cert-learner"), date="d")
    assert kept["certified"] is False and kept["certification"]["failed"] == [f"{release['chains'][0]['id']}/layer 2"]
    assert "not certified (1 of 8 failed)" in kept["evidence_note"] and kept["chains"] == release["chains"]
    out = cert.certify_release(release, lib, model_for(tmp_path / "a", "clr-cert-learner"), replace=True, date="d")
    again = cert.certify_release(release, lib, model_for(tmp_path / "b", "clr-cert-learner"), replace=True, date="d")
    assert dump_release(out) == dump_release(again) and out["certified"] is True
    new = out["chains"][0]["slots"][1]
    assert new["class_id"] != old["class_id"]
    assert (new["label"], new["field"], new["layer"]) == (old["label"], old["field"], old["layer"])
    entry = out["certification"]["slots"][1]
    assert entry["replaced"] == [old["class_id"]] and entry["class_id"] == new["class_id"]
    assert [s for i, s in enumerate(out["chains"][0]["slots"]) if i != 1] == [
        s for i, s in enumerate(release["chains"][0]["slots"]) if i != 1
    ]
    pools = [
        {s["example"], *s["members"], s["practice_nonmember"], *s["test_nonmembers"]} for s in out["chains"][0]["slots"]
    ]
    assert sum(map(len, pools)) == len(set().union(*pools))  # still disjoint across the chain's layers
