"""AHE's harness components as files, which of them the evolve agent may edit, and what the solver sees of them.

NexAU (AHE's agent framework) makes every part of the harness an explicit file; here the parts a text solver can use
are kept: the system prompt, tool descriptions, middleware rules, long-term memory and skills. `memory/ahe/` is the
method's own state: it is never shown to the solver, never part of a candidate tree and never editable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel

from evoarena.harness.state import Absent, parse_state
from evoarena.methods.prompting import render_prompt

STATE = "memory/ahe/state.json"
STATE_DIR = "memory/ahe/"
PROMPT, MEMORY, MIDDLEWARE, TOOLS, SKILLS = "system.md", "memory/long_term.md", "middleware.md", "tools.md", "skills/"
ALIASES: dict[str, tuple[str, ...]] = {
    "prompt": (PROMPT,),
    "memory": (MEMORY,),
    "middleware": (MIDDLEWARE,),
    "tools": (TOOLS,),
    "skills": (SKILLS,),
}
ALIASES["all"] = tuple(p for name in ("prompt", "tools", "middleware", "memory", "skills") for p in ALIASES[name])
KNOWN = frozenset(ALIASES["all"])


def resolve_components(names: Iterable[str]) -> tuple[str, ...]:
    """Editable paths (a trailing ``/`` is a directory of ``*.md`` files) from aliases (`prompt`, `memory`,
    `skills`, `middleware`, `tools`, `all`, also as `prompt-only` …) or the paths themselves; anything else raises."""
    out: list[str] = []
    for raw in names:
        name = str(raw).strip().removesuffix("-only")
        paths = ALIASES.get(name) or ((name,) if name in KNOWN or name + "/" in KNOWN else None)
        if paths is None:
            raise ValueError(f"methods.ahe.params.components: unknown component {raw!r} (known: "
                             f"{', '.join(sorted(ALIASES))} or {', '.join(sorted(KNOWN))})")
        out.extend(p if p in KNOWN else p + "/" for p in paths)
    if not out:
        raise ValueError("methods.ahe.params.components: name at least one component")
    return tuple(dict.fromkeys(out))


def editable(path: str, components: Sequence[str]) -> bool:
    """Whether `path` belongs to an editable component (a skill is a ``.md`` file directly under ``skills/``)."""
    for comp in components:
        if comp.endswith("/"):
            rest = path[len(comp):] if path.startswith(comp) else ""
            if rest.endswith(".md") and "/" not in rest and rest != ".md":
                return True
        elif path == comp:
            return True
    return False


def component_tree(tree: Mapping[str, str]) -> dict[str, str]:
    """The harness without AHE's own state: what a candidate is, what rollouts run on, what the solver may see."""
    return {k: v for k, v in tree.items() if not k.startswith(STATE_DIR)}


def skill_files(tree: Mapping[str, str]) -> dict[str, str]:
    return {p: t for p, t in sorted(tree.items()) if editable(p, (SKILLS,)) and t.strip()}


def render_context(tree: Mapping[str, str]) -> str:
    """Every non-empty component except `system.md` (that is the system message), in the order the solver should
    read them: tools, skills, long-term memory, then the middleware rules to check before answering."""
    return render_prompt(__package__, "context", tools=tree.get(TOOLS, "").strip(),
                         skills={p: t.strip() for p, t in skill_files(tree).items()},
                         memory=tree.get(MEMORY, "").strip(), middleware=tree.get(MIDDLEWARE, "").strip()).strip()


PrPair = tuple[float | None, float | None]
"""(precision, recall); None where undefined."""


class RoundPR(BaseModel):
    """A round's fix or regression prediction P/R as kept (enough to rebuild it for pooling)."""

    predicted: list[str]
    actual: list[str]
    hits: list[str]
    n_tasks: int
    summed_predictions: int
    summed_hits: int


class LastRound(BaseModel):
    round: int
    pass_rate: float
    evaluation: str
    rolled_back: list[str]
    adopted: list[str]
    refused: list[str]


class State(BaseModel):
    """AHE's state: the round, every round's P/R and their pooled and mean figures, the live version, the last
    manifest (ChangeManifest's own JSON form) with the outcomes and snapshot it is scored against, and a summary of
    the last round. Keys appear as the rounds set them."""

    round: int = 0
    fix_prs: list[RoundPR] = []
    regression_prs: list[RoundPR] = []
    live: Absent[str] = None
    manifest: Absent[dict[str, object]] = None
    outcomes: Absent[dict[str, str]] = None
    snapshot: Absent[dict[str, str]] = None
    last: Absent[LastRound] = None
    pooled_pr: Absent[dict[str, PrPair]] = None
    mean_pr: Absent[dict[str, PrPair]] = None


def read_state(tree: Mapping[str, str]) -> State | None:
    text = tree.get(STATE)
    return None if text is None else parse_state(STATE, text, State)
