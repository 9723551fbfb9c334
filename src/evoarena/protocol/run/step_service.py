"""The cell's side of one practice step: the only holder of the benchmark, the grader, the role models (and through
them the ledger and the store) and the budget meter. A method reaches it only through `channel.Port` requests,
whose arguments are plain JSON values checked here; attempt numbers, the step's attempt limit and the harness
version an attempt ran on are decided here, not by the method."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from evoarena.api import Attempt, Benchmark, Feedback, Method, Task, TestSplitLocked
from evoarena.harness import tree_hash
from evoarena.models import Completion, Message, ModelCallError, RoleModel
from evoarena.protocol.boundary.checked import as_int, as_list, as_text, gen_params
from evoarena.protocol.budget import BudgetExhausted, BudgetMeter
from evoarena.protocol.run.evaluate import attempt_row
from evoarena.protocol.scheduler import SERIAL, Scheduler
from evoarena.protocol.solve.solve import solve
from evoarena.store import AttemptRow

#: the event kinds the runner writes (the run's lifecycle, its executor, probes, each cell's method isolation, budget
#: and provider stops, rollbacks): a method may not log them (`tests/security/test_runner_records.py` checks that
#: every kind the source writes is here)
RUNNER_EVENTS = frozenset({
    "run_started", "run_interrupted", "run_finished", "executor", "probes", "method_isolation",
    "budget_exhausted", "provider_unavailable", "rollback",
})


class Grader:
    """Grades train/val tasks. It holds no test task and no handle to the benchmark's generator."""

    def __init__(self, tasks: Mapping[str, Task], grade: Callable[..., Feedback]) -> None:
        self._tasks = dict(tasks)
        self._grade = grade
        self._memo: dict[tuple[str, str | None, int], Feedback] = {}

    def task(self, task_id: str) -> Task:
        if not isinstance(task_id, str) or task_id not in self._tasks:
            raise TestSplitLocked(f"task {task_id!r} is not a train/val task; methods cannot grade it")
        return self._tasks[task_id]

    def grade(self, task_id: str, answer: str | None, attempt: int = 1) -> Feedback:
        """Memoised: grading may run programs in the sandbox, and a method asks again for the same attempt."""
        key = (task_id, answer, attempt)
        if key not in self._memo:
            self._memo[key] = self._grade(self.task(task_id), answer, attempt=attempt)
        return self._memo[key]


class StepService:
    """Answers a step's requests (`handle(op, args)`); keeps the attempt rows and the rejection count the cell
    records when the step ends."""

    def __init__(
        self,
        *,
        method: Method,
        benchmark: Benchmark,
        models: Mapping[str, RoleModel],
        grader: Grader,
        meter: BudgetMeter,
        on_event: Callable[[str, dict[str, Any]], None],
        current_tree: Callable[[], Mapping[str, str]],
        version_id: str,
        attempt_limit: int | None = None,
        first_attempt: int = 1,
        scheduler: Scheduler = SERIAL,
    ) -> None:
        self._scheduler = scheduler  # runs a batch's rollouts or calls concurrently; results kept in request order
        self._method = method  # its build_messages assembles solver prompts, as at test
        self._benchmark = benchmark
        self._models = dict(models)
        self._grader = grader
        self._meter = meter
        self._on_event = on_event
        self._current_tree = current_tree
        self._version_id = version_id
        self._attempt_limit = attempt_limit
        self._first_attempt = first_attempt
        self._submitted: dict[str, int] = {}
        self.attempt_rows: list[AttemptRow] = []
        self.rejections = 0
        self.candidates: list[Candidate] = []  # saved as versions with the step's unit

    def handle(self, op: str, args: dict[str, Any]) -> Any:
        handler = getattr(self, f"_op_{op}", None) if isinstance(op, str) and op.isidentifier() else None
        if handler is None or not isinstance(args, dict):
            raise ValueError(f"unknown request {op!r}")
        return handler(**args)

    def _op_complete(self, role: str, messages: list[list[str]], params: dict[str, Any] | None,
                     sample_index: int) -> Completion:
        model = self._role_model(role)
        msgs = [Message.from_wire(m) for m in messages]
        return model.complete(msgs, None if params is None else gen_params(params), sample_index=as_int(sample_index))

    def _role_model(self, role: str) -> RoleModel:
        if role not in self._models:
            raise KeyError(f"role {role!r} is not mapped to a model in the spec (roles: {sorted(self._models)})")
        return self._models[role]

    def _op_attempt(self, task_id: str, tree: dict[str, str] | None, sample_index: int, submit: bool) -> Attempt:
        """A submitted attempt (`submit`: counted against the step's limit, numbered in its stage) or a rollout
        (graded like the step's current attempt, never submitted)."""
        if not submit:
            return self._op_rollouts([{"task_id": task_id, "tree": tree, "sample_index": sample_index}])[0]
        task = self._grader.task(task_id)
        done = self._submitted.get(task.id, 0)
        if self._attempt_limit is not None and sum(self._submitted.values()) >= self._attempt_limit:
            raise RuntimeError(f"this practice step allows {self._attempt_limit} attempt(s); check ctx.attempt_limit")
        self._submitted[task.id] = done + 1
        self._meter.before_attempt()
        attempt, row = self._graded(task, self._tree(tree), as_int(sample_index), self._first_attempt + done, True,
                                    tree is None)
        self.attempt_rows.append(row)
        return attempt

    def _op_rollouts(self, items: list[dict[str, Any]]) -> list[Attempt]:
        """Rollouts run by the scheduler. Everything order-dependent happens here first, in request order: the tasks
        checked, the numbers given, the budget reserved (as many as it allows; a refusal is raised after those ran, as
        the sequential rollouts would have). The rows are recorded in request order."""
        if not isinstance(items, list):
            raise TypeError("rollouts: expected a list of requests")
        plan = []
        for item in items:
            task = self._grader.task(item["task_id"])
            tree = item["tree"]
            number = self._first_attempt + max(self._submitted.get(task.id, 0) - 1, 0)
            plan.append((task, self._tree(tree), as_int(item["sample_index"]), number, tree is None))
        refused: BudgetExhausted | None = None
        allowed = 0
        for _ in plan:
            try:
                self._meter.before_attempt()
            except BudgetExhausted as err:
                refused = err
                break
            allowed += 1
        done = self._scheduler.map(lambda p: self._graded(p[0], p[1], p[2], p[3], False, p[4]), plan[:allowed])
        self.attempt_rows.extend(row for _, row in done)
        if refused is not None:
            raise refused
        return [attempt for attempt, _ in done]

    def _tree(self, tree: dict[str, str] | None) -> dict[str, str]:
        return dict(self._current_tree()) if tree is None else {as_text(k): as_text(v) for k, v in tree.items()}

    def _graded(self, task: Task, tree: dict[str, str], sample_index: int, number: int, submit: bool,
                live: bool) -> tuple[Attempt, AttemptRow]:
        """One solver attempt on `tree` and its grading; `live`: the tree is the step's current version."""
        attempt = solve(self._method, self._benchmark, tree, task.view(), self._models["solver"],
                        sample_index=sample_index, roles=self._models)
        attempt = replace(attempt, number=number)
        fb = None if attempt.error else self._grader.grade(task.id, attempt.answer, number)
        phase = "practice" if submit else "rollout"
        version = self._version_id if live else tree_hash(tree)  # a candidate's content address (see `candidate`)
        return attempt, attempt_row(attempt, fb, phase=phase, task_id=task.id, version_id=version)

    def _op_complete_many(self, role: str, prompts: list[str], params: dict[str, Any],
                          sample_indices: list[int]) -> list[Completion | None]:
        """One user-message call per prompt, made by the scheduler; None where a call failed after its retries."""
        model = self._role_model(role)
        if not isinstance(prompts, list) or not isinstance(sample_indices, list) or len(prompts) != len(sample_indices):
            raise TypeError("complete_many: expected prompts and sample indices of one length")
        gen = gen_params(params)

        def one(pair: tuple[str, int]) -> Completion | None:
            try:
                return model.complete([Message("user", pair[0])], gen, sample_index=pair[1])
            except ModelCallError:
                return None

        return self._scheduler.map(one, [(as_text(p), as_int(i)) for p, i in zip(prompts, sample_indices, strict=True)])

    def _op_chat_many(self, role: str, conversations: list[list[Any]], params: dict[str, Any],
                      sample_indices: list[int]) -> list[Completion | None]:
        """One call per conversation (messages in `Message.to_wire` form, tools in the params), made by the
        scheduler; None where a call failed after its retries."""
        model = self._role_model(role)
        if not isinstance(conversations, list) or not isinstance(sample_indices, list) or \
                len(conversations) != len(sample_indices):
            raise TypeError("chat_many: expected conversations and sample indices of one length")
        gen = gen_params(params)
        chats = [[Message.from_wire(m) for m in as_list(c)] for c in conversations]

        def one(pair: tuple[list[Message], int]) -> Completion | None:
            try:
                return model.complete(pair[0], gen, sample_index=pair[1])
            except ModelCallError:
                return None

        return self._scheduler.map(one, [(c, as_int(i)) for c, i in zip(chats, sample_indices, strict=True)])

    def _op_grade(self, task_id: str, answer: str | None, number: int) -> Feedback:
        return self._grader.grade(task_id, _answer(answer), as_int(number))

    def _op_observation(self, task_id: str, answer: str | None, number: int) -> str | None:
        return self._benchmark.observation(self._grader.grade(task_id, _answer(answer), as_int(number)))

    def _op_label(self, task_id: str) -> str:
        t = self._grader.task(task_id)
        if t.split != "train":
            raise TestSplitLocked(f"labels are only available for train tasks, not {t.split}")
        return t.reference

    def _op_candidate(self, tree: dict[str, str], parents: list[str], intent: str, evidence: str) -> str:
        if not isinstance(tree, dict) or not isinstance(parents, list):
            raise TypeError("candidate: expected a tree (mapping) and a list of parent ids")
        kept = Candidate(self._tree(tree), tuple(as_text(p) for p in parents), as_text(intent), as_text(evidence))
        self.candidates.append(kept)
        return tree_hash(kept.tree)

    def _op_event(self, kind: str, payload: dict[str, Any]) -> None:
        """A method's event (`ctx.log`, `ctx.reject`), stored as the method's; a kind the runner writes is refused."""
        kind = as_text(kind)
        if kind in RUNNER_EVENTS:
            raise ValueError(f"ctx.log: event kind {kind!r} is written by the runner only; log under a name of the "
                             "method's own")
        if not isinstance(payload, dict):
            raise TypeError(f"ctx.log: the payload of {kind!r} must be a mapping, not {type(payload).__name__}")
        if kind == "rejected_output":
            self.rejections += 1
        self._on_event(kind, dict(payload))


@dataclass(frozen=True)
class Candidate:
    """A harness a method searches over, kept in the archive with the step's unit."""

    tree: dict[str, str]
    parents: tuple[str, ...]
    intent: str
    evidence: str


def _answer(value: object) -> str | None:
    return None if value is None else as_text(value)
