"""The roster library: value universes (one factual sentence per value) and named groupings over them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

KINDS = (
    "intergovernmental",
    "standards",
    "airline_alliances",
    "indices_and_clubs",
    "software_and_ports",
    "university_networks",
    "language_families",
)


@dataclass(frozen=True)
class Universe:
    id: str
    description: str
    values: dict[str, str]  # value -> one-sentence description that never names a grouping


@dataclass(frozen=True)
class Roster:
    id: str
    name: str
    kind: str
    universe: str
    source: str
    snapshot: str
    aliases: tuple[str, ...]
    members: frozenset[str]


class LibraryError(ValueError):
    """The shipped (or a user's) roster data is inconsistent."""


@dataclass(frozen=True)
class Library:
    universes: dict[str, Universe]
    rosters: dict[str, Roster]

    def rosters_in(self, universe: str) -> list[Roster]:
        return [r for r in self.rosters.values() if r.universe == universe]

    def containing(self, value: str, universe: str) -> list[Roster]:
        return [r for r in self.rosters_in(universe) if value in r.members]

    def competitors(self, roster: Roster, value: str) -> list[Roster]:
        """Other rosters of the same universe that also contain `value` (they compete to explain it)."""
        return [r for r in self.containing(value, roster.universe) if r.id != roster.id]


# libyaml's safe loader when PyYAML was built with it: the same documents, parsed ~10x faster than the pure-Python
# one (the shipped library is ~20 files, most of a CLR run's benchmark build in a fresh process)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str, where: str) -> Any:
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as err:
        raise LibraryError(f"{where}: not valid YAML ({str(err).splitlines()[0]})") from None


def parse_library(universe_docs: Iterable[tuple[str, str]], roster_docs: Iterable[tuple[str, str]]) -> Library:
    """Build a library from (name, yaml text) pairs and check it: unique ids, members in their universe."""
    universes: dict[str, Universe] = {}
    for where, text in universe_docs:
        doc = _load_yaml(text, where)
        uid = doc["universe"]
        if uid in universes:
            raise LibraryError(f"{where}: universe {uid!r} defined twice")
        universes[uid] = Universe(
            uid, str(doc.get("description", "")).strip(), {str(k): str(v) for k, v in doc["values"].items()}
        )
    rosters: dict[str, Roster] = {}
    for where, text in roster_docs:
        for item in _load_yaml(text, where) or []:
            r = Roster(
                id=item["id"],
                name=item["name"],
                kind=item["kind"],
                universe=item["universe"],
                source=item["source"],
                snapshot=str(item["snapshot"]),
                aliases=tuple(item.get("aliases", ())),
                members=frozenset(str(m) for m in item["members"]),
            )
            if r.id in rosters:
                raise LibraryError(f"{where}: roster id {r.id!r} defined twice")
            if r.kind not in KINDS:
                raise LibraryError(f"{where}: roster {r.id}: unknown kind {r.kind!r}")
            if r.universe not in universes:
                raise LibraryError(f"{where}: roster {r.id}: unknown universe {r.universe!r}")
            missing = sorted(r.members - set(universes[r.universe].values))
            if missing:
                raise LibraryError(f"{where}: roster {r.id}: members not in universe {r.universe}: {missing[:5]}")
            rosters[r.id] = r
    return Library(universes, rosters)


@cache
def shipped_library() -> Library:
    """The roster library shipped in the package (data/universes, data/rosters)."""
    data = resources.files("evoarena.benchmarks.clr").joinpath("data")
    uni = sorted(
        (p.name, p.read_text("utf-8")) for p in data.joinpath("universes").iterdir() if p.name.endswith(".yaml")
    )
    ros = sorted((p.name, p.read_text("utf-8")) for p in data.joinpath("rosters").iterdir() if p.name.endswith(".yaml"))
    return parse_library(uni, ros)
