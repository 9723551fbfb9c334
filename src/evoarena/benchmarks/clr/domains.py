"""CLR domains: entities, the record noun, the base task and three trap fields over value universes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from evoarena.benchmarks.clr.library import Library, LibraryError


@dataclass(frozen=True)
class TrapField:
    name: str
    universe: str
    label_noun: str


@dataclass(frozen=True)
class Domain:
    id: str
    name: str
    entity: str
    entities: tuple[str, ...]
    record: str
    base_task: str
    fields: tuple[TrapField, ...]


def parse_domains(text: str, library: Library) -> list[Domain]:
    out: list[Domain] = []
    for item in yaml.safe_load(text):
        fields = tuple(TrapField(**f) for f in item["fields"])
        if len(fields) != 3:
            raise LibraryError(f"domain {item['id']}: needs exactly three trap fields, has {len(fields)}")
        for f in fields:
            if f.universe not in library.universes:
                raise LibraryError(f"domain {item['id']}: field {f.name}: unknown universe {f.universe!r}")
        out.append(
            Domain(
                item["id"],
                item["name"],
                item["entity"],
                tuple(item["entities"]),
                item["record"],
                item["base_task"],
                fields,
            )
        )
    if len({d.id for d in out}) != len(out):
        raise LibraryError("domains: duplicate domain id")
    return out


@cache
def shipped_domains_text() -> str:
    return resources.files("evoarena.benchmarks.clr").joinpath("data").joinpath("domains.yaml").read_text("utf-8")
