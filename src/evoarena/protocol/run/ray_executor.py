"""`executor: {kind: ray}`: each cell runs as a Ray task on a local or remote cluster, the driver writes the run.

A task rebuilds the spec's benchmark (checking that its test split hashes as the driver's did), gets the cell's
finished units and harness versions from the driver (`transfer.seed_rows`), runs the cell against a private store
(`ray_store.WorkerStore`) with model calls made from the worker, and sends each finished unit's rows, each billed call's
ledger row and its progress through a Ray queue; the driver absorbs them into the run store in the order they were
sent. Resume is the local executor's: a unit the driver has is skipped, one it lacks is redone.

Ray is an optional dependency (`pip install 'evoarena[ray]'`); this module imports it only when a run asks for it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evoarena.models import Halt, ResponseCache, RunHalted
from evoarena.protocol.progress import CellProgress, Progress
from evoarena.protocol.run.cell import CellPlan
from evoarena.protocol.run.cell_work import RunParts, build_parts, cell_runner
from evoarena.protocol.run.evaluate import Evaluator
from evoarena.protocol.run.grading import bind_grading
from evoarena.protocol.run.ray_store import WorkerStore
from evoarena.protocol.scheduler import Scheduler
from evoarena.spec import ExperimentSpec
from evoarena.store import RunStore
from evoarena.store.transfer import CallIds, Rows, absorb, drop_call, seed_rows

log = logging.getLogger(__name__)
_POLL_S = 0.05


class WorkerMismatch(RuntimeError):
    """A worker built a different run than the driver (another benchmark version, other task files)."""


class RayUnreachable(RuntimeError):
    """The driver could not join the cluster at `executor.address`: nothing answered there, or the cluster refused
    the driver's authentication token (or its lack of one)."""


def run_on_ray(plans: list[CellPlan], *, parts: RunParts, search: tuple[Path, ...], store: RunStore,
               cache: ResponseCache, halt: Halt, concurrency: int, progress: Progress | None) -> None:
    """Run `plans` as Ray tasks and absorb what they send into `store`. The first failure stops the run, as the local
    executor's does: tasks not finished are cancelled and that failure is raised."""
    import ray
    from ray.util.queue import Queue

    spec = parts.spec
    started = _connect(ray, spec.executor.address)
    try:
        store.event("executor", {"kind": "ray", "address": spec.executor.address,
                                 "nodes": len(ray.nodes()), "cpus": ray.cluster_resources().get("CPU", 0)})
        outbox = Queue(actor_options={"num_cpus": 0})
        task = ray.remote(work_cell).options(num_cpus=spec.executor.cpus_per_cell, max_retries=0)
        spec_json = spec.model_dump_json()
        pending = {
            task.remote(spec_json, plan, seed_rows(store, plan.cell), [str(p) for p in search], str(cache.path),
                        concurrency, parts.locked.hash, outbox): plan
            for plan in plans
        }
        _drive(ray, pending, outbox, _Absorber(store, progress), halt)
    finally:
        if started:
            ray.shutdown()


def _connect(ray: Any, address: str) -> bool:
    """Attach to the cluster (`local`: start one for this run); True when this call started Ray here."""
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    if address == "local":
        ray.init(include_dashboard=False, **kwargs)
    else:
        token = _token_auth_as_ray_start_does()
        try:
            ray.init(address=address, **kwargs)
        except (ConnectionError, ray.exceptions.AuthenticationError) as exc:
            found = "a token was found here: is it the cluster's?" if token else "no Ray token was found here"
            raise RayUnreachable(
                f"executor.address {address}: no Ray cluster answered or it refused this driver ({found}); a cluster "
                "with token authentication needs its token here, as a file named by RAY_AUTH_TOKEN_PATH or in "
                "RAY_AUTH_TOKEN (docs/protocol.md § Executors)") from exc
    return True


def _token_auth_as_ray_start_does() -> bool:
    """`ray start` turns token authentication on when a token is available (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or
    ~/.ray/auth_token) and RAY_AUTH_MODE is unset, but Ray 2.60's `ray.init(address=...)` does not, and then waits
    20 s for a cluster that refuses it: do what `ray start` did (a private Ray function; without it, set
    RAY_AUTH_MODE=token yourself). True when token authentication is on."""
    try:
        from ray._private.authentication.authentication_token_setup import (
            maybe_enable_token_auth_if_token_available,
        )
    except ImportError:
        return os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    return bool(maybe_enable_token_auth_if_token_available(warn_if_disabled=False))


class _Absorber:
    """Applies the workers' messages to the driver's store and progress, one cell's ids apart from another's."""

    def __init__(self, store: RunStore, progress: Progress | None) -> None:
        self.store = store
        self.progress = progress
        self.ids: dict[str, CallIds] = {}

    def __call__(self, message: tuple[str, str, Any]) -> None:
        cell, kind, payload = message
        ids = self.ids.setdefault(cell, CallIds())
        if kind == "rows":
            absorb(self.store, payload, ids)
        elif kind == "drop_call":
            drop_call(self.store, int(payload), ids)
        elif kind == "progress" and self.progress is not None:
            self.progress(payload)


def _drive(ray: Any, pending: dict[Any, CellPlan], outbox: Any, apply: Callable[[tuple[str, str, Any]], None],
           halt: Halt) -> None:
    """Absorb messages until every task has ended; then raise the failure that stopped the run, if one did."""
    failures: list[BaseException] = []
    try:
        while pending:
            for message in outbox.get_nowait_batch(outbox.qsize()):
                apply(message)
            ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=_POLL_S)
            for ref in ready:
                del pending[ref]
                try:
                    ray.get(ref)
                except BaseException as err:  # noqa: BLE001 - a task's failure of any kind stops the run
                    failures.append(_cause(err))
                    if not halt.is_set():
                        halt.set(f"{type(failures[-1]).__name__}")
                        for other in pending:
                            ray.cancel(other)
    except BaseException:  # Ctrl-C: stop every task, keep what they sent
        halt.set("interrupted")
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        for message in outbox.get_nowait_batch(outbox.qsize()):  # a finished task's puts all precede its end
            apply(message)
    stopped = (RunHalted, ray.exceptions.TaskCancelledError)
    first = next((e for e in failures if not isinstance(e, stopped)), failures[0] if failures else None)
    if first is not None:
        raise first


def _cause(err: BaseException) -> BaseException:
    """The exception a task raised, not Ray's wrapper of it."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, BaseException) else err


def work_cell(spec_json: str, plan: CellPlan, seed: Rows, search: list[str], cache_path: str, concurrency: int,
              test_hash: str, outbox: Any) -> str:
    """A Ray task: run one cell against a private store and send the driver what it records; returns the selected
    version."""
    spec = ExperimentSpec.model_validate_json(spec_json)
    parts = build_parts(spec, tuple(Path(p) for p in search))
    if parts.locked.hash != test_hash:
        raise WorkerMismatch(f"{plan.cell}: the worker's benchmark has another test split than the driver's "
                             "(a different evoarena version or task files on this node?)")

    def send(kind: str, payload: Any) -> None:
        outbox.put((plan.cell, kind, payload))

    def report(state: CellProgress) -> None:
        send("progress", state)

    with tempfile.TemporaryDirectory(prefix="evoarena-cell-") as tmp:
        store = WorkerStore(Path(tmp), send)
        absorb(store, seed, CallIds())
        cache = ResponseCache(Path(cache_path))
        halt = Halt()
        bind_grading(spec, parts.benchmark, parts.backends, store, cache, halt)
        scheduler = Scheduler(concurrency)
        try:
            run_cell = cell_runner(parts, store=store, evaluator=Evaluator(parts.locked, parts.benchmark),
                                   cache=cache, halt=halt, scheduler=scheduler, progress=report)
            return run_cell(plan)
        finally:
            scheduler.close()
            with contextlib.suppress(Exception):
                store.send_loose(plan.cell)
            store.close()
            cache.close()
