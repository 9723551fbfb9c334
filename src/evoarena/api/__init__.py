"""The contract a method or a benchmark programs against: tasks, attempts, the practice context, the registry.

Everything here sits below `methods/`, `benchmarks/` and `scripted/`, and above `harness/`, `models/`, `store/`.
"""

from evoarena.api.attempt import Attempt
from evoarena.api.benchmark_base import Benchmark
from evoarena.api.context import BudgetExhausted, PracticeContext, Reply, RoleHandle, Rollout
from evoarena.api.environment import Env, InteractiveBenchmark, Step, Turn, episode_answer
from evoarena.api.episode_agent import AgentAction, EpisodeAgent, EpisodeContext, EpisodeEnd, EpisodeView
from evoarena.api.grading import GRADING_PHASE, GradingModel
from evoarena.api.method_base import Method, harness_toml
from evoarena.api.params import DefaultsParams, ParamError, Params, check_params, closest, field_defaults
from evoarena.api.probe import GENERIC_EXAMPLES, Probe, ProbeExample, Verdict
from evoarena.api.registry import (
    KINDS,
    REGISTRY,
    Entry,
    Kind,
    PluginError,
    Registry,
    UnknownName,
    benchmark,
    load_plugins,
    method,
    policy,
    view,
)
from evoarena.api.schedule import Curriculum, PracticeSelectTest, Schedule
from evoarena.api.task import Feedback, Parsed, Split, Task, TaskView, TestSplitLocked
from evoarena.api.views import ReportContext, ReportView, RunInfo, TemplateView, ViewPage
from evoarena.harness import HarnessWorkspace, Manifest

__all__ = [
    "AgentAction",
    "BudgetExhausted",
    "EpisodeAgent",
    "EpisodeContext",
    "EpisodeEnd",
    "EpisodeView",
    "KINDS",
    "REGISTRY",
    "Attempt",
    "Benchmark",
    "Curriculum",
    "Entry",
    "Env",
    "GENERIC_EXAMPLES",
    "GRADING_PHASE",
    "Feedback",
    "InteractiveBenchmark",
    "GradingModel",
    "HarnessWorkspace",
    "Kind",
    "Manifest",
    "Method",
    "ParamError",
    "Parsed",
    "PluginError",
    "Probe",
    "ProbeExample",
    "PracticeContext",
    "PracticeSelectTest",
    "RoleHandle",
    "Registry",
    "Reply",
    "Rollout",
    "Schedule",
    "ReportContext",
    "ReportView",
    "RunInfo",
    "Split",
    "Step",
    "Task",
    "TaskView",
    "TemplateView",
    "Turn",
    "TestSplitLocked",
    "UnknownName",
    "Verdict",
    "ViewPage",
    "benchmark",
    "episode_answer",
    "check_params",
    "field_defaults",
    "Params",
    "DefaultsParams",
    "closest",
    "harness_toml",
    "load_plugins",
    "method",
    "policy",
    "view",
]
