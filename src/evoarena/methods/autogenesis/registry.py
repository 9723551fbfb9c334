"""Autogenesis's resource registry (RSPL, as released in DVampire/Autogenesis @6a8c122): each resource has a type,
a learnability mask (`require_grad`, and one per sub-variable of a prompt), and a history of versions — patch-bumped
from 1.0.0, each ACTIVE, DEPRECATED or ARCHIVED with its time and description — of which one is current; any
version can be restored. Kept as JSON (with every version's text) in the method's state directory."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, RootModel

from evoarena.harness.state import parse_state, state_text

STATUSES = ("ACTIVE", "DEPRECATED", "ARCHIVED")


class RegistryError(ValueError):
    """A request the registry refuses (an unknown resource or version, a change to what is not learnable)."""


class Version(BaseModel):
    version: str
    status: str
    step: int
    description: str
    text: str


class Resource(BaseModel):
    name: str
    type: str  # prompt | memory | skill | tool | agent | environment
    path: str  # the harness file the current version is written to
    require_grad: bool
    sub_grad: dict[str, bool] = {}  # prompt sections: name -> learnable
    current: str = "1.0.0"
    versions: list[Version] = []

    def get(self, version: str) -> Version:
        for v in self.versions:
            if v.version == version:
                return v
        raise RegistryError(f"{self.name}: no version {version!r} (known: {[v.version for v in self.versions]})")

    def text(self) -> str:
        return self.get(self.current).text


class RegistryFile(RootModel[dict[str, Resource]]):
    """The registry as its state file holds it: {name: resource}."""


class Registry:
    """The resources of one harness, by name."""

    def __init__(self, resources: Mapping[str, Resource] | None = None) -> None:
        self.resources: dict[str, Resource] = dict(resources or {})

    def register(self, name: str, type_: str, path: str, text: str, *, require_grad: bool, step: int,
                 sub_grad: Mapping[str, bool] | None = None) -> Resource:
        first = Version(version="1.0.0", status="ACTIVE", step=step, description="initial", text=text)
        res = Resource(name=name, type=type_, path=path, require_grad=require_grad, sub_grad=dict(sub_grad or {}),
                       versions=[first])
        self.resources[name] = res
        return res

    def learnable(self, name: str) -> bool:
        return name in self.resources and self.resources[name].require_grad

    def set_version(self, name: str, text: str, *, step: int, description: str) -> str:
        """A new version of a learnable resource (patch bump of the highest), made current and ACTIVE; the
        previous current version becomes DEPRECATED."""
        res = self._resource(name)
        if not res.require_grad:
            raise RegistryError(f"{name}: not learnable (require_grad is off)")
        major, minor, patch = max(tuple(int(x) for x in v.version.split(".")) for v in res.versions)
        new = f"{major}.{minor}.{patch + 1}"
        res.get(res.current).status = "DEPRECATED"
        res.versions.append(Version(version=new, status="ACTIVE", step=step, description=description, text=text))
        res.current = new
        return new

    def restore(self, name: str, version: str, *, archive_current: bool = False) -> None:
        """Make `version` current (ACTIVE) again; the one it replaces becomes DEPRECATED, or ARCHIVED when it is
        being rolled back."""
        res = self._resource(name)
        target = res.get(version)
        res.get(res.current).status = "ARCHIVED" if archive_current else "DEPRECATED"
        target.status = "ACTIVE"
        res.current = version

    def _resource(self, name: str) -> Resource:
        if name not in self.resources:
            raise RegistryError(f"no resource {name!r} (known: {sorted(self.resources)})")
        return self.resources[name]

    def file(self) -> RegistryFile:
        return RegistryFile(self.resources)

    def dumps(self) -> str:
        return state_text(self.file())

    @classmethod
    def loads(cls, text: str, rel: str = "registry.json") -> Registry:
        return cls(parse_state(rel, text, RegistryFile).root)


def sections(text: str) -> dict[str, str]:
    """A prompt's sub-variables: its `## name` sections in order (text before the first is `preamble`)."""
    out: dict[str, list[str]] = {"preamble": []}
    name = "preamble"
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip().lower() or f"section{len(out)}"
            out.setdefault(name, [])
            continue
        out[name].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items() if k != "preamble" or "\n".join(v).strip()}


def join_sections(parts: Mapping[str, str]) -> str:
    return "\n\n".join(v if k == "preamble" else f"## {k}\n{v}" for k, v in parts.items()).strip() + "\n"
