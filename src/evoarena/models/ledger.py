"""Every model call goes through here: cache, retries with backoff (or the provider's `Retry-After`), concurrency
limit, budget, ledger row."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Protocol

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from evoarena.codec import to_plain
from evoarena.models.base import (
    Backend,
    Completion,
    GenParams,
    Message,
    ProviderError,
    offers_function_calling,
    refuse_tools,
)
from evoarena.models.cache import ResponseCache, call_key, prompt_hash
from evoarena.models.halt import Halt, RunHalted
from evoarena.spec import ModelSpec
from evoarena.store import RunStore, TextResponse
from evoarena.store.calls import INTERRUPTED


class ModelCallError(RuntimeError):
    """A provider error that survived all retries. Recorded as an error, never scored as a task failure."""


class Meter(Protocol):
    """Budget hook: `before_call` may raise to refuse a call; `after_call` counts what it used (tokens, USD)."""

    def before_call(self) -> None: ...

    def after_call(self, tokens: int, usd: float = 0.0) -> None: ...


def evaluated_tokens(completion: Completion | None, *, cached: bool, backend: object) -> int | None:
    """Prompt tokens the model computed for this call: what the backend reported (embedded prefix reuse, a server's
    cached prompt tokens), 0 for a response-cache hit of a backend that always reports, else None (unknown)."""
    if completion is None:
        return None
    if cached:
        return 0 if getattr(backend, "reports_evaluated_tokens", False) else None
    n = completion.extra.get("input_tokens_evaluated")
    return None if n is None else int(n)


def sample_seed(seed: int, sample_index: int) -> int:
    """The seed of sample `sample_index` of a seeded call: sample 0 keeps the run's seed, every other sample gets its
    own, so a group of samples (TF-GRPO's rollouts, best-of-n) is not n copies of one draw on a seeded backend."""
    if sample_index == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % 2**31


_limits: dict[str, threading.Semaphore] = {}
_limits_lock = threading.Lock()


def endpoint_limit(endpoint: str, concurrency: int) -> threading.Semaphore:
    with _limits_lock:
        if endpoint not in _limits:
            _limits[endpoint] = threading.BoundedSemaphore(max(1, concurrency))
        return _limits[endpoint]


@dataclass(frozen=True)
class _Flight:
    """A call in flight: the caller that makes it (`leader`) and the event the others with the same key wait on."""

    landed: threading.Event
    leader: bool


_flights: dict[str, threading.Event] = {}
_flights_lock = threading.Lock()


def _take_off(key: str) -> _Flight:
    """Single flight: the first caller of `key` makes the call; a concurrent caller of the same key waits for it and
    then finds the answer in the cache, as it would have, had it come after. So concurrency never pays twice for one
    call, and a run's billed calls are those of the sequential run."""
    with _flights_lock:
        landed = _flights.get(key)
        if landed is not None:
            return _Flight(landed, leader=False)
        landed = _flights[key] = threading.Event()
        return _Flight(landed, leader=True)


def _land(key: str, flight: _Flight) -> None:
    if flight.leader:
        with _flights_lock:
            del _flights[key]
        flight.landed.set()


@dataclass(frozen=True)
class CallScope:
    """Where a call belongs in the ledger."""

    cell: str | None = None
    phase: str | None = None
    meter: Meter | None = None
    unit: str | None = None  # the cell's unit key (practice step, test), so calls map to chains and layers
    ambient: bool = False  # take cell and unit from `attributed(...)` (a judge grades for whichever cell asks)
    batch: bool = False  # the unit commits its rows with its attempts (RunStore.defer_call), where they may wait


_attribution: ContextVar[CallScope | None] = ContextVar("evoarena_call_attribution", default=None)


@contextmanager
def attributed(scope: CallScope) -> Iterator[None]:
    """Calls of `ambient` RoleModels made inside this block (in this thread) are recorded under `scope`'s cell and
    unit: the runner wraps a cell's grading in it, so a judge's calls land in the ledger row of the cell they grade."""
    token = _attribution.set(scope)
    try:
        yield
    finally:
        _attribution.reset(token)


def _pause(err: BaseException | None, backoff: float, deadline: float) -> float:
    """The wait before the next try: the back-off, or the provider's `Retry-After` when it asks for longer — but
    never past the call's `deadline` (monotonic): its start plus `timeout_s` for each try it may make, the longest
    its tries could have taken had each timed out. So a provider that asks for an hour cannot stall the run."""
    asked = err.retry_after if isinstance(err, ProviderError) else None
    if asked is None or asked <= backoff:
        return backoff
    return max(backoff, min(asked, deadline - time.monotonic()))


class RoleModel:
    """A model bound to a role and a ledger. Methods and agents only ever see these."""

    def __init__(
        self,
        *,
        role: str,
        model_name: str,
        backend: Backend,
        spec: ModelSpec,
        store: RunStore,
        cache: ResponseCache | None,
        scope: CallScope = CallScope(),
        default_params: GenParams | None = None,
        backoff_base_s: float = 0.5,
        halt: Halt | None = None,
        in_flight: threading.Semaphore | None = None,
    ) -> None:
        self.role = role
        self.model_name = model_name
        self.backend = backend
        self.spec = spec
        self.store = store
        self.cache = cache
        self.scope = scope
        self.default_params = default_params or GenParams()
        self.backoff_base_s = backoff_base_s
        self.halt = halt
        self.in_flight = in_flight  # the run-wide cap on calls in flight (the scheduler's), besides the endpoint's

    def scoped(self, scope: CallScope) -> RoleModel:
        clone = RoleModel.__new__(RoleModel)
        clone.__dict__.update(self.__dict__)
        clone.scope = scope
        return clone

    @property
    def function_calling(self) -> bool:
        """Whether its backend takes tools (`GenParams.tools`)."""
        return offers_function_calling(self.backend)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        p = self.spec.price
        return (input_tokens * p.input_per_mtok + output_tokens * p.output_per_mtok) / 1e6

    def complete(
        self, messages: Sequence[Message], params: GenParams | None = None, *, sample_index: int = 0
    ) -> Completion:
        params = params or self.default_params
        refuse_tools(self.backend, params)  # a clear error, before anything is ledgered
        if params.seed is None and self.default_params.seed is not None:
            params = replace(params, seed=self.default_params.seed)
        if sample_index and params.seed is not None:
            params = replace(params, seed=sample_seed(params.seed, sample_index))
        key = call_key(self.backend, params, messages, sample_index)
        if self.halt is not None:
            self.halt.check()
        if self.scope.meter is not None:
            self.scope.meter.before_call()
        while True:
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is not None:
                call_id = self._record(params, messages, key, hit, 0.0, cached=True, retries=0, error=None)
                return replace(hit, call_id=call_id)
            flight = _take_off(key) if self.cache is not None else None
            if flight is None or flight.leader:
                break
            flight.landed.wait()  # the same call is in flight: its answer is in the cache now (if it failed, try)
            if self.halt is not None:
                self.halt.check()
        try:
            return self._call(messages, params, key)
        finally:
            if flight is not None:
                _land(key, flight)

    def _call(self, messages: Sequence[Message], params: GenParams, key: str) -> Completion:
        """The call itself, with retries; ledgered (and cached) as it goes."""
        # a billed call's row is written before the call is made and completed after it, so a kill at any point leaves
        # every call that may have reached the provider in the ledger (as `INTERRUPTED` if it never came back)
        pending = None
        if getattr(self.backend, "billed", True):
            pending = self._record(params, messages, key, None, 0.0, cached=False, retries=0, error=INTERRUPTED)
        tries = 0
        start = time.monotonic()
        last_error: ProviderError | None = None

        def attempt() -> Completion:
            nonlocal tries, last_error
            if self.halt is not None and tries:
                self.halt.check()  # the run stopped during the back-off: no further try
            tries += 1
            try:
                with self.in_flight or contextlib.nullcontext(), \
                        endpoint_limit(self.backend.endpoint, self.spec.concurrency):
                    return self.backend.complete(messages, params)
            except ProviderError as err:
                last_error = err
                raise

        try:
            completion = self._with_retries(attempt)
        except RunHalted:
            if last_error is None:  # no try was made: nothing reached the provider
                if pending is not None:
                    self.store.drop_call(pending)
            else:  # the tries that reached the provider stay in the ledger
                self._record(params, messages, key, None, time.monotonic() - start, cached=False, retries=tries - 1,
                             error=f"{type(last_error).__name__}: {last_error} (no more tries: the run stopped)",
                             pending=pending)
            raise
        except ProviderError as err:
            msg = f"{type(err).__name__}: {err}"
            self._record(params, messages, key, None, time.monotonic() - start, cached=False,
                         retries=tries - 1, error=msg, pending=pending)
            raise ModelCallError(
                f"{self.role} call to {self.backend.model_id} failed after {tries} tries: {err}"
            ) from err
        latency = time.monotonic() - start
        # the ledger row first: a kill between the two then costs a repeated call on resume (ledgered too), never a
        # billed call missing from the ledger
        call_id = self._record(params, messages, key, completion, latency, cached=False, retries=tries - 1, error=None,
                               pending=pending)
        if self.cache is not None:
            self.cache.put(key, completion)
        return replace(completion, call_id=call_id)

    def _with_retries(self, attempt: Callable[[], Completion]) -> Completion:
        """`attempt()`, retried on a retryable provider error up to `max_retries` times with exponential back-off
        (base, 2·base, 4·base, … at most 30 s), or longer where the provider asked for it (`_pause`). The first try is
        made directly: most calls succeed at once, and tenacity's machinery costs more than a scripted call."""
        deadline = time.monotonic() + self.spec.timeout_s * (self.spec.max_retries + 1)
        try:
            return attempt()
        except ProviderError as err:
            if not err.retryable or self.spec.max_retries == 0:
                raise
            first = err
        sleep = self.halt.sleep if self.halt is not None else time.sleep
        sleep(_pause(first, min(self.backoff_base_s, 30), deadline))  # tenacity takes over from try 2
        backoff = wait_exponential(multiplier=2 * self.backoff_base_s, max=30)

        def wait(state: RetryCallState) -> float:
            failed = state.outcome.exception() if state.outcome is not None else None
            return _pause(failed, backoff(state), deadline)

        return Retrying(
            retry=retry_if_exception(lambda e: isinstance(e, ProviderError) and e.retryable),
            stop=stop_after_attempt(self.spec.max_retries),
            wait=wait,
            sleep=sleep,
            reraise=True,
        )(attempt)

    def prompt_format(self, completion: Completion | None) -> str | None:
        """How the backend turned the messages into a prompt (embedded: "chat-template" or "plain"); None for a
        backend that sends the messages as they are. A cached completion carries no `extra`, so the backend's own
        (fixed) format is the fallback."""
        fmt = completion.extra.get("prompt_format") if completion is not None else None
        fmt = fmt or getattr(self.backend, "prompt_format", None)
        return None if fmt is None else str(fmt)

    def _record(
        self,
        params: GenParams,
        messages: Sequence[Message],
        key: str,
        completion: Completion | None,
        latency: float,
        *,
        cached: bool,
        retries: int,
        error: str | None,
        pending: int | None = None,
    ) -> int:
        """Write the ledger row with the exact messages and response (none for an error), or complete the `pending`
        row written before the call; return its id."""
        tin = completion.usage.input_tokens if completion else 0
        tout = completion.usage.output_tokens if completion else 0
        response = None
        if completion is not None:
            response = TextResponse(
                text=completion.text,
                finish_reason=completion.finish_reason,
                logprobs=None if completion.logprobs is None else [t.ledger_form() for t in completion.logprobs],
                tool_calls=to_plain(completion.tool_calls) or None,
            )
        where = self.scope
        outer = _attribution.get() if where.ambient else None
        if outer is not None:
            where = replace(where, cell=outer.cell, unit=outer.unit)
        outcome: dict[str, Any] = dict(
            input_tokens=tin, output_tokens=tout, latency_s=round(latency, 4), cost_usd=self.cost(tin, tout),
            retries=retries, error=error, prompt_format=self.prompt_format(completion),
            input_tokens_evaluated=evaluated_tokens(completion, cached=cached, backend=self.backend))
        # a cell's unit writes its rows in one transaction with its attempts, but for those that must be on disk at
        # once: billed calls (written ahead) and errors (the unit's fate is decided from them)
        defer = (where.batch and where.cell is not None and where.unit is not None and error is None
                 and (cached or not getattr(self.backend, "billed", True)))
        if pending is not None:
            self.store.finish_call(pending, response=response, **outcome)
            call_id = pending
        else:
            call_id = (self.store.defer_call if defer else self.store.record_call)(
                request=[m.ledger_form() for m in messages],
                response=response,
                cell=where.cell,
                phase=where.phase,
                unit=where.unit,
                role=self.role,
                model=self.model_name,
                backend=self.backend.backend_name,
                model_id=self.backend.model_id,
                params=json.dumps(params.ledger_form(), sort_keys=True),
                prompt_hash=prompt_hash(messages),
                cache_key=key,
                cached=int(cached),
                **outcome,
            )
        if self.scope.meter is not None and completion is not None:
            self.scope.meter.after_call(tin + tout, self.cost(tin, tout))
        return call_id
