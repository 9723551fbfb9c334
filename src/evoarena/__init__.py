"""evoarena: a lab for self-evolving agent harnesses.

The public API, importable from here (loaded on first use, so `import evoarena` stays light):
- writing a method or a benchmark: `Method`, `Benchmark`, `PracticeContext`, `Reply`, `Attempt`, `Task`, `TaskView`,
  `Feedback`, `Parsed`, `Manifest`, `HarnessWorkspace`, and the registry decorators `method`, `benchmark`,
  `policy` (scripted-model policies) and `view` (report sections);
- running: `load_spec`, `parse_spec`, `ExperimentSpec`, `run_experiment`, `validate_spec`;
- evolving in one call: `evolve` (→ `Evolved`; its progress as `CellProgress` events), and `load_prompt` for a
  prompt that `evoarena export` wrote;
- reading a run: `RunStore`, `rebuild_report` (→ `RunResults`, the typed record results.json holds).
Everything else is internal and may move.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evoarena.version import __version__

_EXPORTS: dict[str, str] = {
    **{name: "evoarena.api" for name in (
        "Attempt", "Benchmark", "Feedback", "HarnessWorkspace", "Manifest", "Method", "Parsed", "PracticeContext",
        "Reply", "Task", "TaskView", "TestSplitLocked", "benchmark", "method", "policy", "view",
    )},
    "ExperimentSpec": "evoarena.spec", "SpecError": "evoarena.spec", "load_spec": "evoarena.spec",
    "parse_spec": "evoarena.spec",
    "run_experiment": "evoarena.protocol.run.runner", "validate_spec": "evoarena.protocol.validate",
    "RunStore": "evoarena.store",
    "rebuild_report": "evoarena.protocol.run.reporting", "RunResults": "evoarena.report.results_record",
    "evolve": "evoarena.one_call", "Evolved": "evoarena.one_call", "CellProgress": "evoarena.protocol.progress",
    "load_prompt": "evoarena.protocol.export.prompt_file",
}

__all__ = [
    "__version__",
    "Attempt",
    "Benchmark",
    "CellProgress",
    "Evolved",
    "ExperimentSpec",
    "Feedback",
    "HarnessWorkspace",
    "Manifest",
    "Method",
    "Parsed",
    "PracticeContext",
    "Reply",
    "RunResults",
    "RunStore",
    "SpecError",
    "Task",
    "TaskView",
    "TestSplitLocked",
    "benchmark",
    "evolve",
    "load_prompt",
    "load_spec",
    "method",
    "parse_spec",
    "policy",
    "rebuild_report",
    "run_experiment",
    "validate_spec",
    "view",
]

if TYPE_CHECKING:
    from evoarena.api import (
        Attempt,
        Benchmark,
        Feedback,
        HarnessWorkspace,
        Manifest,
        Method,
        Parsed,
        PracticeContext,
        Reply,
        Task,
        TaskView,
        TestSplitLocked,
        benchmark,
        method,
        policy,
        view,
    )
    from evoarena.one_call import Evolved, evolve
    from evoarena.protocol.export.prompt_file import load_prompt
    from evoarena.protocol.progress import CellProgress
    from evoarena.protocol.run.reporting import rebuild_report
    from evoarena.protocol.run.runner import run_experiment
    from evoarena.protocol.validate import validate_spec
    from evoarena.report.results_record import RunResults
    from evoarena.spec import ExperimentSpec, SpecError, load_spec, parse_spec
    from evoarena.store import RunStore


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'evoarena' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
