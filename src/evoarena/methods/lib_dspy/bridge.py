"""The bridge between DSPy 3.4 and a cell: DSPy imported lazily with its caches off, a `dspy.BaseLM` that calls a
cell role's model, and a ChatAdapter whose calls of the optimised program on a train/val example are the cell's
rollouts (graded attempts in the ledger and the budget) of the program's state written as a harness tree."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import lru_cache
from types import ModuleType, SimpleNamespace
from typing import Any, Literal

from evoarena.api import Attempt, BudgetExhausted, Parsed, PracticeContext, TaskView
from evoarena.models import GenParams, Message

PROGRAM = "memory/dspy/program.json"
"""DSPy's own dump of the program (`Module.dump_state()`): instructions and demos."""
SIGNATURE = "question -> answer"
Program = Literal["Predict", "ChainOfThought"]


class Halt(BaseException):
    """The cell refused a call (budget): raised past DSPy's `except Exception` so the optimiser stops where it is."""


def load_dspy() -> ModuleType:
    """DSPy, imported here only (never at evoarena's import), with no network lookup of LiteLLM's cost map and every
    cache off, so each call reaches the cell's ledger and response cache and nothing is written under HOME; its
    event log is silenced (evoarena's ledger and log tell what it did; its prints and progress bars are not)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("DSPY_CACHEDIR", os.devnull)  # never used: both caches are off below
    import dspy

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    dspy.disable_logging()
    return dspy


def new_program(kind: Program) -> Any:
    """The program DSPy optimises: `dspy.Predict` (or `dspy.ChainOfThought`) over `question -> answer`."""
    dspy = load_dspy()
    return getattr(dspy, kind)(SIGNATURE)


def predictor(program: Any) -> Any:
    (only,) = program.predictors()
    return only


@lru_cache(maxsize=64)
def _loaded(kind: Program, state: str) -> Any:
    program = new_program(kind)
    program.load_state(json.loads(state))
    return program


def program_of(kind: Program, tree: Mapping[str, str]) -> Any:
    """The program a harness holds (a fresh one when it holds none); shared, so read it and never change it."""
    return _loaded(kind, tree.get(PROGRAM) or json.dumps(new_program(kind).dump_state()))


def state_text(program: Any) -> str:
    return json.dumps(program.dump_state(), indent=2, ensure_ascii=False, sort_keys=True, default=str) + "\n"


def chat_messages(program: Any, question: str) -> list[Message]:
    """What the program's ChatAdapter sends for `question` (its instructions, field structure and demos)."""
    dspy = load_dspy()
    pred = predictor(program)
    sent = dspy.ChatAdapter(use_json_adapter_fallback=False).format(pred.signature, pred.demos, {"question": question})
    return [Message(m["role"], m["content"]) for m in sent]


def read_answer(program: Any, text: str) -> Parsed:
    """The `answer` field as DSPy's ChatAdapter parses it from a reply, or why it cannot."""
    dspy = load_dspy()
    from dspy.utils.exceptions import AdapterParseError

    try:
        fields = dspy.ChatAdapter(use_json_adapter_fallback=False).parse(predictor(program).signature, text)
    except AdapterParseError as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else "unparsable"
        return Parsed(None, f"DSPy ChatAdapter: {first}"[:200])
    return Parsed(str(fields["answer"]))


def _response(text: str, model: str) -> Any:
    """An OpenAI-shaped chat completion, as `BaseLM._process_completion` reads one."""
    message = SimpleNamespace(content=text, tool_calls=None, reasoning_content=None)
    return SimpleNamespace(choices=[SimpleNamespace(message=message, logprobs=None)], usage={}, model=model)


def cell_lm(ctx: PracticeContext, role: str) -> Any:
    """A `dspy.BaseLM` whose every call is one call of the cell's `role` model (ledgered, cached, budgeted)."""
    dspy = load_dspy()

    class CellLM(dspy.BaseLM):  # type: ignore[name-defined]
        def __init__(self) -> None:
            handle = ctx.model(role)
            super().__init__(model=f"evoarena/{role}/{handle.model_name}", cache=False)
            self.role = role

        def forward(self, prompt: str | None = None, messages: list[dict[str, Any]] | None = None,
                    **kwargs: Any) -> Any:
            sent = messages if messages is not None else [{"role": "user", "content": prompt or ""}]
            base = ctx.model(self.role).default_params
            params = GenParams(**{**base.__dict__, **{k: kwargs[k] for k in ("temperature", "max_tokens")
                                                       if kwargs.get(k) is not None}})
            try:
                done = ctx.model(self.role).complete([Message(m["role"], str(m["content"])) for m in sent], params)
            except RuntimeError as err:
                raise halted(err) from None
            return _response(done.text, self.model)

    return CellLM()


def halted(err: BaseException) -> BaseException:
    """The cell's budget refusal becomes `Halt` (DSPy would count it as one more failed example and go on); any other
    error is DSPy's to handle."""
    return Halt(str(err)) if isinstance(err, BudgetExhausted) else err


class Rollouts:
    """The optimiser's calls of the program on the cell's tasks: each one a rollout of the program's state at that
    call (its instructions and demos as DSPy's own dump; the temperature and rollout id DSPy asked for, as the
    harness's solver temperature and the sample index), answered with the solver's reply. Each state is kept for
    `keep_candidates` (the archive then holds every program the library ran, with its results), each attempt for
    the metric, which grades it through the cell, and each state's scores for `best`."""

    def __init__(self, ctx: PracticeContext, kind: Program, tasks: Mapping[str, TaskView]) -> None:
        self.ctx, self.kind, self.tasks = ctx, kind, dict(tasks)
        self.attempts: dict[str, tuple[str, Attempt]] = {}
        self.count = 0
        self.kept: dict[str, tuple[dict[str, str], str]] = {}
        self.scores: dict[str, dict[str, float]] = {}
        self.base = {k: v for k, v in ctx.harness.tree().items() if k != PROGRAM}

    def tree_for(self, signature: Any, demos: list[Any], temperature: float | None) -> dict[str, str]:
        program = new_program(self.kind)
        pred = predictor(program)
        pred.signature, pred.demos = signature, list(demos)
        tree = {**self.base, PROGRAM: state_text(program)}
        toml = tree.get("harness.toml", "")
        if temperature is not None and "temperature = " in toml:
            lines = [f"temperature = {float(temperature)}" if ln.startswith("temperature = ") else ln
                     for ln in toml.splitlines()]
            tree["harness.toml"] = "\n".join(lines) + "\n"
        return tree

    def run(self, signature: Any, demos: list[Any], inputs: Mapping[str, Any], lm: Any,
            lm_kwargs: Mapping[str, Any]) -> Attempt | None:
        """The rollout for a call of the program on one of the cell's tasks (None: not such a call)."""
        task = self.tasks.get(str(inputs.get("question")))
        if task is None or set(signature.input_fields) != {"question"} or "answer" not in signature.output_fields:
            return None
        knobs = {**getattr(lm, "kwargs", {}), **lm_kwargs}
        tree = self.tree_for(signature, demos, knobs.get("temperature"))
        self.kept.setdefault(tree[PROGRAM], (tree, task.id))
        try:
            attempt = self.ctx.rollout(task, tree=tree, sample_index=int(knobs.get("rollout_id") or 0))
        except RuntimeError as err:
            raise halted(err) from None
        self.attempts[task.prompt] = (tree[PROGRAM], attempt)
        self.count += 1
        return attempt

    def keep_candidates(self, but: str | None) -> None:
        """Every program state the library ran but `but` (the one the harness takes, a version of its own) kept as a
        candidate version with its rollouts (lineage), with the first task it ran on."""
        for state, (tree, first) in self.kept.items():
            if state != but:
                self.ctx.candidate(tree, intent="a program state DSPy ran", evidence=first)

    def adapter(self) -> Any:
        dspy = load_dspy()
        owner = self

        class CellAdapter(dspy.ChatAdapter):  # type: ignore[name-defined]
            def __call__(self, lm: Any, lm_kwargs: dict[str, Any], signature: Any, demos: list[Any],
                         inputs: dict[str, Any]) -> list[dict[str, Any]]:
                attempt = owner.run(signature, demos, inputs, lm, lm_kwargs)
                if attempt is None:
                    return super().__call__(lm, lm_kwargs, signature, demos, inputs)
                return [self.parse(signature, attempt.text)]

        return CellAdapter(use_json_adapter_fallback=False)

    def metric(self) -> Callable[..., float]:
        """DSPy's metric (also in GEPA's five-argument form): the cell's grade of the rollout the program's
        prediction came from (0 when the rollout had a provider error)."""

        def metric(example: Any, prediction: Any, trace: Any = None, pred_name: Any = None,
                   pred_trace: Any = None) -> float:
            state, attempt = self.attempts.get(str(example.question), ("", None))
            if attempt is None or attempt.error:
                return 0.0
            task = self.tasks[str(example.question)]
            score = float(self.ctx.feedback(task, attempt).score)
            self.scores.setdefault(state, {})[task.id] = score
            return score

        return metric

    def best(self) -> str | None:
        """The best program state graded so far: among those graded on the most tasks, the highest mean score (the
        first graded on a tie); None before any grade."""
        if not self.scores:
            return None
        most = max(len(s) for s in self.scores.values())
        full = [(sum(s.values()) / most, -i, state) for i, (state, s) in enumerate(self.scores.items())
                if len(s) == most]
        return max(full)[2]
