"""Meta-Harness's search history, kept as files in the method's own state directory (`memory/meta_harness/`):
every candidate's files, its per-task results and traces, an append-only evolution summary and the frontier; and
the read-only view of it a proposer gets in each access mode (`scores`, `scores+summary`, `full`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Literal, get_args

from pydantic import BaseModel, RootModel

from evoarena.harness.state import Given, parse_records

ROOT = "memory/meta_harness/"
Access = Literal["scores", "scores+summary", "full"]
"""What the proposer's tools can read (`access`)."""
MODES: tuple[str, ...] = get_args(Access)
SUMMARY = "summary.jsonl"
FRONTIER = "frontier.json"


class Scores(BaseModel):
    """A candidate's `scores.json`: its accuracy on the search tasks, its context size and each task's score."""

    accuracy: float
    context_chars: int
    tasks: dict[str, float]


class FrontierRow(BaseModel):
    candidate: str
    accuracy: float
    context_chars: int


class Frontier(RootModel[list[FrontierRow]]):
    """`frontier.json`: the accuracy / context-size Pareto frontier of the candidates."""


class SummaryEntry(Given):
    """A line of the evolution summary: a candidate, the iteration that proposed it and what became of it (its
    parent and measures when it got that far), with the proposal's name, hypothesis, changes and expected
    efficiency. A line holds the keys its outcome set, as given (a seed's `parent` is null, a refused candidate has
    none): a `Given` record."""

    iteration: int
    candidate: str
    parent: str | None = None
    accuracy: float | None = None
    delta_vs_best: float | None = None
    context_chars: int | None = None
    outcome: str
    name: str = ""
    hypothesis: str = ""
    changes: str = ""
    expected_efficiency: str = ""


def history_text(value: BaseModel) -> str:
    """A history file as the proposer has always read it (sorted, one-space indent, ASCII, no final newline)."""
    return json.dumps(value.model_dump(mode="json"), indent=1, sort_keys=True)


def candidate_dir(cid: str) -> str:
    return f"candidates/{cid}/"


def state_files(tree: Mapping[str, str]) -> dict[str, str]:
    """The history's files (paths relative to ROOT)."""
    return {k[len(ROOT):]: v for k, v in tree.items() if k.startswith(ROOT)}


def view(tree: Mapping[str, str], mode: str) -> dict[str, str]:
    """What the proposer may read: `scores` — each candidate's per-task scores and the frontier; `scores+summary` —
    also the evolution summary (hypotheses, changes, outcomes); `full` — also every candidate's files and traces."""
    if mode not in MODES:
        raise ValueError(f"access mode {mode!r} is not one of {', '.join(MODES)}")
    return {path: text for path, text in state_files(tree).items() if _visible(path, mode)}


def _visible(path: str, mode: str) -> bool:
    if path == FRONTIER or path.endswith("/scores.json"):
        return True
    if path == SUMMARY:
        return mode != "scores"
    return mode == "full" and path.startswith("candidates/")


def read_summary(history: Mapping[str, str]) -> list[SummaryEntry]:
    """The evolution summary of a history (paths relative to ROOT)."""
    return parse_records(ROOT + SUMMARY, history.get(SUMMARY, ""), SummaryEntry)


def traces_text(rows: Sequence[Mapping[str, str]]) -> str:
    """A candidate's traces: per task, the input, the output and the grader's feedback."""
    return "\n\n".join(f"## {r['task']}\n### input\n{r['input']}\n### output\n{r['output']}\n### feedback\n"
                       f"{r['feedback']}" for r in rows) + "\n"
