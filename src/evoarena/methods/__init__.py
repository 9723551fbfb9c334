"""Evolution methods, one module each."""

from evoarena.methods.ace import Ace
from evoarena.methods.base import Method, render_prompt
from evoarena.methods.bootstrap_fewshot import BootstrapFewShot
from evoarena.methods.dynamic_cheatsheet import DynamicCheatsheet
from evoarena.methods.evoskill import EvoSkill
from evoarena.methods.frozen import Frozen
from evoarena.methods.gepa import Gepa
from evoarena.methods.history import History
from evoarena.methods.reasoning_bank import ReasoningBank
from evoarena.methods.reflexion import Reflexion
from evoarena.methods.skillprox import SkillProx
from evoarena.methods.tf_grpo import TfGrpo

METHODS: dict[str, type[Method]] = {
    m.name: m
    for m in (
        Frozen,
        History,
        Reflexion,
        BootstrapFewShot,
        Ace,
        DynamicCheatsheet,
        TfGrpo,
        Gepa,
        EvoSkill,
        ReasoningBank,
        SkillProx,
    )
}


def build_method(name: str, params: dict[str, object]) -> Method:
    if name not in METHODS:
        raise ValueError(f"methods.name: unknown method {name!r} (known: {sorted(METHODS)})")
    return METHODS[name](**params)


__all__ = [
    "METHODS",
    "Ace",
    "BootstrapFewShot",
    "DynamicCheatsheet",
    "EvoSkill",
    "Frozen",
    "Gepa",
    "History",
    "Method",
    "ReasoningBank",
    "Reflexion",
    "TfGrpo",
    "build_method",
    "render_prompt",
]
