"""`clr`: CLR-Bench as an evoarena benchmark (curriculum protocol: chains are episodes, layers are stages)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from evoarena.api import Benchmark, Curriculum, Feedback, Parsed, ProbeExample, Task, TaskView, benchmark
from evoarena.benchmarks.clr.cells import CellFactory
from evoarena.benchmarks.clr.certify import NEUTRAL_TITLE, lesson_text
from evoarena.benchmarks.clr.chains import Slot
from evoarena.benchmarks.clr.domains import Domain, parse_domains, shipped_domains_text
from evoarena.benchmarks.clr.grading import reference_totals, test_answer
from evoarena.benchmarks.clr.library import shipped_library
from evoarena.benchmarks.clr.metrics import score_layer, state_diagnostics, value_diagnostics
from evoarena.benchmarks.clr.practice import grade_practice
from evoarena.benchmarks.clr.probe_examples import PROBE_EXAMPLES
from evoarena.benchmarks.clr.program import run_program
from evoarena.benchmarks.clr.release import build_release
from evoarena.benchmarks.clr.tasks import task_text
from evoarena.codec import from_plain, to_plain
from evoarena.models.base import GenParams

NOTES: dict[str, Callable[[], str]] = {
    "clr:lesson": lambda: lesson_text(),
    "clr:lesson-neutral": lambda: lesson_text(NEUTRAL_TITLE),
    "clr:convention": lambda: lesson_text(NEUTRAL_TITLE, procedure=False),
    "clr:procedure": lambda: lesson_text(NEUTRAL_TITLE, convention=False),
}


def class_name_note(slots: list[Slot]) -> str:
    return "\n".join(f"{s.label} stands for: {s.class_name}." for s in slots)


_CODE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S)


@benchmark("clr")
class ClrBenchmark(Benchmark):
    """CLR-Bench: a curriculum of latent rules over public named groupings (chains are episodes, layers stages)."""

    schedule = Curriculum

    class Params(Benchmark.Params):
        release: str | None = Field(None, description="Path to a release JSON; none: the release built from `seed`.")
        seed: int = Field(0, description="Seed of the release built when no `release` is given.")
        chains: int | None = Field(None, ge=1, description="How many of the release's chains to use, in order "
                                                             "(none: all; more than it has: all).")
        layers: int = Field(4, ge=1, le=4, description="Stages per chain (a chain has four rules).")
        rewarded: bool = Field(False, description="Rewarded practice.")
        max_attempts: int = Field(3, ge=1, description="Practice attempts per layer.")
        class_names_in_task: bool = Field(False, description="The solver-side reference: tasks name the active "
                                                             "classes.")

        @field_validator("release")
        @classmethod
        def _exists(cls, path: str | None) -> str | None:
            if path is not None and not Path(path).is_file():
                raise ValueError(f"no such file {path!r}")
            return path

    params: Params

    @classmethod
    def probe_examples(cls) -> tuple[ProbeExample, ...]:
        """Two tiny rules with a wrong program and CLR's membership feedback (probe_examples.py)."""
        return PROBE_EXAMPLES

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        self.lib = shipped_library()
        self.domains: dict[str, Domain] = {d.id: d for d in parse_domains(shipped_domains_text(), self.lib)}
        if p.release:
            self.release = json.loads(Path(p.release).read_text("utf-8"))
        elif p.seed == 0:  # the shipped default release (tests check it equals a fresh build)
            self.release = json.loads(
                resources.files("evoarena.benchmarks.clr")
                .joinpath("data")
                .joinpath("release-0.json")
                .read_text("utf-8")
            )
        else:
            self.release = build_release(p.seed)
        chains = self.release["chains"][: p.chains or len(self.release["chains"])]
        self.layers = p.layers
        self.rewarded = p.rewarded
        self.class_names_in_task = p.class_names_in_task  # the solver-side reference
        self._chains = {c["id"]: (self.domains[c["domain"]], [from_plain(Slot, x) for x in c["slots"]]) for c in chains}
        self._factories = {
            cid: CellFactory(self.lib, d, s, f"{cid}:{self.release['seed']}") for cid, (d, s) in self._chains.items()
        }

    def update_note(self, note: str | None, task: Task) -> str | None:
        """Named notes: `clr:lesson` (the full lesson, original title), `clr:lesson-neutral` (under "UPDATE NOTE"),
        `clr:convention`, `clr:procedure` (one part, neutral title); a suffix `@L1` keeps the note to layer 1
        (the seed's layer-1-only ablation). The lesson is evoarena's reconstruction (clr-notes A1)."""
        if note is None or not note.startswith("clr:"):
            return note
        name, _, only = note.partition("@")
        if only and only != "L1":
            raise ValueError(f"update_note {note!r}: the only stage suffix is @L1")
        if only and int(task.meta["stage"]) != 1:
            return None
        if name == "clr:class-name":  # the class-name reference: names the active classes in the update step
            _, slots = self._chains[str(task.meta["episode"])]
            return class_name_note(slots[: int(task.meta["stage"])])
        if name not in NOTES:
            known = ", ".join(sorted([*NOTES, "clr:class-name"]))
            raise ValueError(f"update_note {note!r}: unknown (known: {known}, each optionally @L1)")
        return NOTES[name]()

    def info(self) -> dict[str, Any]:
        return {
            **super().info(),
            "certified": bool(self.release.get("certified")),
            "certification": self.release.get("certification"),
            "chains": list(self._chains),
            "layers": self.layers,
            "rewarded": self.rewarded,
        }

    def generate(self) -> list[Task]:
        tasks: list[Task] = []
        for cid, (domain, slots) in self._chains.items():
            for k in range(1, self.layers + 1):
                stage = f"{cid}/L{k}"
                meta = {"episode": cid, "stage": k, "test_id": f"{stage}/test"}
                named = class_name_note(slots[:k]) if self.class_names_in_task else None
                practice = task_text(domain, slots[:k], practice=True, seed=stage, class_names=named)
                test = task_text(domain, slots[:k], practice=False, seed=stage, class_names=named)
                tasks.append(Task(f"{stage}/practice", "train", f"{stage}/practice", practice, "", meta))
                tasks.append(Task(f"{stage}/test", "test", f"{stage}/test", test, "", meta))
        return tasks

    def parse(self, text: str) -> Parsed:
        blocks = [b for b in _CODE.findall(text) if "def solve" in b]
        if not blocks:
            return Parsed(None, "no ```python block defining solve(records)")
        return Parsed(blocks[-1])

    def grade(self, task: Task, answer: str | None, *, attempt: int = 1) -> Feedback:
        cid, k = str(task.meta["episode"]), int(task.meta["stage"])
        domain, slots = self._chains[cid]
        factory = self._factories[cid]
        if task.split == "train":
            res = grade_practice(self.lib, domain, slots, factory, k, answer, attempt=attempt, rewarded=self.rewarded)
            return Feedback(float(res.passed), res.passed, res.feedback)
        cells = factory.test_cells(k)
        if answer is None:
            return Feedback(0.0, False, "no program")
        run = run_program(answer, [c.records for c in cells])
        right = sum(
            got is not None
            and test_answer(got)
            == test_answer(reference_totals(self.lib, slots[:k], domain.entity, domain.entities, c.records))
            for c, got in zip(cells, run.totals, strict=True)
        )
        return Feedback(right / len(cells), right == len(cells), f"{right} of {len(cells)} cells correct")

    def observation(self, feedback: Feedback) -> str | None:
        """The practice program's run on the public example and the hidden inputs: the paper's explicit feedback
        is what running the program shows, so methods that pass execution output to their update step see it."""
        return feedback.message

    def diagnose(self, task: Task, answer: str | None, state: str = "") -> dict[str, Any] | None:
        """Per test cell: kind and correctness; per pool value of every active rule: excluded / kept / error."""
        if task.split != "test":
            return None
        cid, k = str(task.meta["episode"]), int(task.meta["stage"])
        domain, slots = self._chains[cid]
        states = [state_diagnostics(state, s) for s in slots[:k]]
        if answer is None:
            return {"layer": k, "cells": [], "values": [], "states": states}
        factory = self._factories[cid]
        layer = score_layer(self.lib, domain, slots, k, factory.test_cells(k), answer)
        values = value_diagnostics(self.lib, domain, slots, k, factory, answer)
        return {
            "layer": k,
            "cells": [{"kind": c.kind, "rule": c.rule, "correct": c.correct} for c in layer.cells],
            "values": to_plain(values),
            "states": states,
        }

    def system_prompt(self) -> str:
        return (
            "You write short Python programs for record-counting audits. Follow the task's rules exactly and "
            "reply with one ```python code block.\n"
        )

    def solver_params(self) -> GenParams:
        return GenParams(temperature=0.0, max_tokens=1024)

    def format_task(self, task: TaskView) -> str:
        return task.prompt
