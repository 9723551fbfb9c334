"""The import graph of `src/evoarena`: no circles, and every arrow points down the floors of docs/architecture.md.

Every import is walked (module level, inside functions, under TYPE_CHECKING), so a lazy import cannot hide an
upward arrow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "evoarena"

# floor of each part (top-level module or package of evoarena); an import must go to a strictly lower floor or stay
# inside its own part. The package face (evoarena/__init__.py) re-exports lazily and is not a floor.
FLOORS: dict[str, int] = {
    "cli": 60, "one_call": 58,
    # protocol's rooms: export leans on solve; the run holds the cell's side of the method boundary, the method's
    # side (boundary) sits below it; shared leaves at protocol's root
    "protocol.export": 55, "protocol.run": 54, "protocol.boundary": 52, "protocol.solve": 51, "protocol": 50,
    "scripted": 40,
    "methods": 30, "benchmarks": 30, "studies": 30,
    "retrieval": 25, "runtime": 25, "envs": 25,
    "api": 20,
    "viewer": 13,
    "report": 12,
    "models": 11, "harness": 11,
    "store": 5, "sandbox": 5, "search": 5, "spec": 5, "version": 0, "codec": 0, "wording": 0,
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """evoarena modules named by `path`'s import statements (all of them, wherever they are)."""
    tree = ast.parse(path.read_text("utf-8"))
    out: set[str] = set()
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("evoarena"))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.startswith("evoarena"):
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return out


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in SRC.rglob("*.py")}
    return {m: {i for i in _imports(p) if i in files and i != m} for m, p in files.items()}


PROTOCOL_ROOMS = {"run", "boundary", "solve", "export"}


def _part(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) > 2 and parts[1] == "protocol" and parts[2] in PROTOCOL_ROOMS:
        return f"protocol.{parts[2]}"
    return parts[1] if len(parts) > 1 else None


def test_every_part_has_a_floor() -> None:
    parts = {_part(m) for m in _graph()} - {None}
    assert parts <= set(FLOORS), f"give these a floor: {sorted(parts - set(FLOORS))}"


def test_no_arrow_runs_up_or_sideways() -> None:
    bad = []
    for module, targets in _graph().items():
        src = _part(module)
        if src is None:
            continue
        for target in targets:
            dst = _part(target)
            if dst is None or dst == src:
                continue
            if FLOORS[dst] >= FLOORS[src]:
                bad.append(f"{module} -> {target}")
    assert not bad, "arrows that do not point down:\n" + "\n".join(sorted(bad))


def test_no_import_circle() -> None:
    graph = _graph()
    graph.pop("evoarena", None)  # the package face re-exports; nothing below imports it at module level
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt == "evoarena":
                continue
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not circles, "import circles:\n" + "\n".join(" -> ".join(c) for c in circles)


@pytest.mark.parametrize("part", ["models", "store", "harness", "sandbox", "search", "report"])
def test_lower_floors_name_no_method_benchmark_or_protocol(part: str) -> None:
    for module, targets in _graph().items():
        if _part(module) != part:
            continue
        named = {_part(t) for t in targets}
        assert not {n.split(".")[0] for n in named if n} & {"methods", "benchmarks", "protocol", "scripted"}, module
        text = (SRC / Path(*module.split(".")[1:])).with_suffix(".py")
        if not text.exists():
            text = SRC / Path(*module.split(".")[1:]) / "__init__.py"
        source = text.read_text("utf-8")
        assert "evoarena.benchmarks" not in source and "evoarena.methods" not in source, module


def test_runtime_reads_only_the_floors_below_the_contract() -> None:
    """runtime/ (in-episode mechanisms) may use sandbox, models, harness, store, search and spec, never the contract
    (api) nor what sits on it (methods, benchmarks, protocol, cli...): a method or an environment composes the
    transforms, not the other way round."""
    allowed = {"runtime", "sandbox", "models", "harness", "store", "search", "spec", "version", "codec"}
    bad = sorted(f"{m} -> {t}" for m, targets in _graph().items() if _part(m) == "runtime"
                 for t in targets if _part(t) not in allowed)
    assert not bad, bad


def _method_rooms() -> set[str]:
    """The built-in methods' rooms (`methods/<room>/` or `methods/<room>.py`), from where each registered class
    lives; shared modules (prompting, jsonparse, replies, scoring…) register nothing and are no room."""
    import evoarena.methods  # noqa: F401  (registers the built-in methods)
    from evoarena.api.registry import REGISTRY

    modules = [e.obj.__module__ for e in REGISTRY.entries("method") if e.obj.__module__.startswith("evoarena.methods.")]
    return {m.split(".")[2] for m in modules}


def test_no_method_imports_another() -> None:
    rooms = _method_rooms()
    assert {"ace", "gepa", "hgm", "jitrl", "frozen"} <= rooms and not rooms & {"prompting", "jsonparse", "replies"}

    def room(module: str) -> str | None:
        parts = module.split(".")
        return parts[2] if len(parts) > 2 and parts[1] == "methods" and parts[2] in rooms else None

    bad = sorted(f"{m} -> {t}" for m, targets in _graph().items() if room(m)
                 for t in targets if room(t) not in (None, room(m)))
    assert not bad, "methods that import another method (move what they share to a shared module):\n" + "\n".join(bad)
