"""`protocol.isolation: process`: a method that runs in a child process of its own (`method_child`), at the
spec's `protocol.method_confinement` (bubblewrap unless the spec asks for less). The cell keeps this stand-in, which
forwards `initialize`, `practice`, `build_messages`, `context` and the method's episode agents (`isolated_episode`)
to the child as `ops` commands and relays the child's requests to the step's channel or the episode's context. What
the child sends is JSON, checked here against the ops' types (`codec`); it never holds the test split, the grader's
data or the run database."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from evoarena.api import EpisodeAgent, Method, Parsed, TaskView
from evoarena.codec import to_plain
from evoarena.harness import HarnessPathError, HarnessWorkspace, Manifest
from evoarena.models import GenParams, Message, ModelCallError, RunHalted
from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.channel import Answer
from evoarena.protocol.boundary.client import StepContext, relay, step_args
from evoarena.protocol.boundary.isolated_episode import RemoteAgent
from evoarena.protocol.boundary.ops import (
    BuildMessages,
    ContextText,
    Hello,
    Initialize,
    Op,
    OpenAgent,
    Practice,
    ReadReply,
    Stop,
)
from evoarena.protocol.boundary.wire import ChannelClosed, recv_frame, send_frame
from evoarena.protocol.budget import BudgetExhausted
from evoarena.protocol.solve.harness_program import HarnessProgramError
from evoarena.sandbox.spawn import Confinement, SpawnedChild, spawn_python

CHILD = "evoarena.protocol.boundary.method_child"
SOURCE_ROOT = Path(__file__).resolve().parents[2]  # the directory evoarena is imported from
# raised by the cell while relaying, the child only passes them on: they end the run, the step or the episode
_PASSED_ON = (BudgetExhausted, RunHalted, ModelCallError, HarnessPathError, HarnessProgramError)
R = TypeVar("R")


def _exit_code(proc: subprocess.Popen[bytes]) -> int | None:
    """The exit code of a child whose pipe closed, once it has exited (its launcher may still be sweeping)."""
    try:
        return proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return None


class MethodProcessError(RuntimeError):
    """The method failed (or died) in its own process."""


def isolated(method_cls: type[Method], params: Mapping[str, Any], *, harness: Path, masked: Sequence[Path],
             readable: Sequence[str] = (), cpu_s: int | None = None,
             confinement: Confinement = "bwrap") -> IsolatedMethod:
    """A stand-in for `method_cls(**params)` whose code runs in a child process at `confinement` (under bubblewrap:
    `harness` its only writable directory, `masked` — the run directory, the response cache — hidden) with at most
    `cpu_s` seconds of CPU."""
    stand_in = type(f"Isolated{method_cls.__name__}", (IsolatedMethod,),
                    {"name": method_cls.name, "roles": method_cls.roles, "Params": method_cls.Params,
                     "__module__": __name__})
    return stand_in(method_cls, dict(params), harness, masked, readable, cpu_s, confinement)


class IsolatedMethod(Method):
    name = "isolated"

    def __init__(self, method_cls: type[Method], params: dict[str, Any], harness: Path, masked: Sequence[Path],
                 readable: Sequence[str], cpu_s: int | None = None, confinement: Confinement = "bwrap") -> None:
        self.params = method_cls.check_params(params)
        self._lock = threading.Lock()  # one exchange at a time…
        self._nested = threading.RLock()  # …and one nested in it (re-entered by its own relays)
        self._practice_relays = 0  # a practice step's requests under way (served on the channel's thread)
        self._count = threading.Lock()
        self._local = threading.local()  # this thread's relays under way (an episode's, served here)
        self._agents = method_cls.episode_agent is not Method.episode_agent
        self._reads = method_cls.read_reply is not Method.read_reply  # else no exchange per reply
        harness.mkdir(parents=True, exist_ok=True)
        code, path = _code_of(method_cls)
        self._child: SpawnedChild = spawn_python(
            CHILD, writable=str(harness.resolve()), readable=[str(SOURCE_ROOT), *code, *readable],
            masked=[str(m.resolve()) for m in masked], cpu_s=cpu_s, path=[str(SOURCE_ROOT)], confinement=confinement)
        self._cpu_s = cpu_s
        self.level = self._child.level
        ref = f"{method_cls.__module__}:{method_cls.__qualname__}"
        self._exchange(Hello(method=ref, params=to_plain(self.params), harness=str(harness.resolve()),
                             sys_path=tuple(path)), None)

    # -- the Method interface, forwarded ------------------------------------------------------------
    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        self._exchange(Initialize(system_prompt=system_prompt, solver_params=solver_params), None)

    def practice(self, ctx: Any, task: TaskView) -> Manifest | None:
        assert isinstance(ctx, StepContext)

        def forward(op: Op[R]) -> R:
            return relay(ctx, op)

        return self._exchange(Practice(step=step_args(ctx), task=task), forward, practice=True)

    def build_messages(self, tree: Mapping[str, str], task_text: str, task: TaskView) -> list[Message]:
        return self._exchange(BuildMessages(tree=dict(tree), task_text=task_text, task=task), None)

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return self._exchange(ContextText(tree=dict(tree), task=task), None)

    def read_reply(self, tree: Mapping[str, str], text: str) -> Parsed:
        if not self._reads:
            return Parsed(text)
        return self._exchange(ReadReply(tree=dict(tree), text=text), None)

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        if not self._agents:
            return None
        ref = self._exchange(OpenAgent(tree=dict(tree), task=task), None)
        return None if ref is None else RemoteAgent(self._exchange, ref.id, ref.meta)

    def close(self) -> None:
        with self._lock:
            try:
                assert self._child.proc.stdin is not None
                send_frame(self._child.proc.stdin, codec.call(Stop()))
            except OSError:
                pass
            self._child.close()

    # -- the pipe -----------------------------------------------------------------------------------
    def _exchange(self, command: Op[R], answer: Answer | None, *, practice: bool = False) -> R:
        """Send `command`, relay the child's requests to `answer` (a step's channel, an episode's context) until
        it answers, and return the answer. One exchange at a time (val and test evaluations may ask from several
        threads), except a command sent while a relay is under way — by a practice step's channel or by this thread:
        the child waits for that request's reply and answers the command first (the attempt's solver prompt, an
        episode agent's step inside a practice attempt, the harness's prompt an agent asked for)."""
        proc = self._child.proc
        assert proc.stdin is not None and proc.stdout is not None
        passed: list[BaseException] = []  # raised by the cell while relaying, to raise again if the child passes it on

        def relayed(op: Op[Any]) -> Any:
            if answer is None:
                raise RuntimeError("no step is running")
            try:
                return self._relay(answer, op, practice)
            except _PASSED_ON as err:
                passed.append(err)
                raise

        nested = self._practice_relays > 0 or getattr(self._local, "relays", 0) > 0
        with self._nested if nested else self._lock:
            try:
                send_frame(proc.stdin, codec.call(command))
                while isinstance(msg := codec.read(recv_frame(proc.stdout), type(command)), codec.Call):
                    send_frame(proc.stdin, codec.answer(msg.op, relayed))
            except (ChannelClosed, OSError, ValueError) as err:
                code = _exit_code(proc)
                if code is not None and self._child.killed_by_cpu_limit():
                    raise MethodProcessError(f"{self.name}: the method's process passed its CPU limit "
                                             f"(protocol.method_cpu_s: {self._cpu_s} s) and was killed") from None
                raise MethodProcessError(f"{self.name}: the method's process went away ({err}; exit code {code})"
                                         ) from None
        if isinstance(msg, codec.Failed):
            if passed and msg.error == type(passed[-1]).__name__:
                raise passed[-1]
            raise MethodProcessError(f"{self.name} failed in its process: {msg.error}: {msg.message}")
        out: R = msg.value
        return out

    def _relay(self, answer: Answer, op: Op[Any], practice: bool) -> Any:
        self._local.relays = getattr(self._local, "relays", 0) + 1
        if practice:
            with self._count:
                self._practice_relays += 1
        try:
            return answer(op)
        finally:
            self._local.relays -= 1
            if practice:
                with self._count:
                    self._practice_relays -= 1


def _code_of(method_cls: type[Method]) -> tuple[list[str], list[str]]:
    """What the child must read to import `method_cls` from outside evoarena and the installed packages: its
    top-level package directory (or lone module file) — never the directory around it, which may hold runs — and
    the sys.path entry it is imported from."""
    top = sys.modules[method_cls.__module__.partition(".")[0]]
    where = getattr(top, "__file__", None)
    if where is None:
        return [], []
    file = Path(where).resolve()
    code = file.parent if file.name == "__init__.py" else file
    covered = (Path(sys.prefix), Path(sys.base_prefix), SOURCE_ROOT)
    if any(code.is_relative_to(p.resolve()) for p in covered):
        return [], []
    return [str(code)], [str(code.parent)]

