"""The one envelope and codec of the method boundary, for the in-process channel and the pipe alike. A message is a
`Call` (an op), a `Done` (its answer, typed by the op's `reply`) or a `Failed` (an exception: its type's name from a
closed list and its arguments, so the receiver raises a fresh one of that type — no traceback, no cause, no
attributes of the original). Everything crosses as JSON checked against its type on arrival: neither side ever
unpickles what the other sent."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Annotated, Any, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, Field, JsonValue, TypeAdapter, ValidationError

from evoarena.api import TestSplitLocked
from evoarena.harness import HarnessPathError, ManifestError
from evoarena.models import ModelCallError, ProviderError, RunHalted
from evoarena.protocol.boundary.ops import OPS, WIRE, Op
from evoarena.protocol.budget import BudgetExhausted
from evoarena.protocol.solve.harness_program import HarnessProgramError

R = TypeVar("R")
AnOp = TypeVar("AnOp", bound=Op[Any])

#: the exceptions that cross as themselves; any other crosses as its nearest listed base (RuntimeError for none),
#: its message prefixed by its type's name. A kill (KeyboardInterrupt, SystemExit) crosses as itself, so a run cut
#: during a method's request stops as a killed run, to be resumed.
FAILURES: dict[str, type[BaseException]] = {cls.__name__: cls for cls in (
    KeyboardInterrupt, SystemExit,
    Exception, ValueError, TypeError, KeyError, IndexError, LookupError, RuntimeError, NotImplementedError,
    RecursionError, AssertionError, AttributeError, ArithmeticError, ZeroDivisionError, OverflowError,
    UnicodeError, OSError, PermissionError, FileNotFoundError, FileExistsError, IsADirectoryError,
    NotADirectoryError, TimeoutError, EOFError, MemoryError,
    TestSplitLocked, BudgetExhausted, RunHalted, ModelCallError, ProviderError, HarnessPathError,
    HarnessProgramError, ManifestError,
)}


class Call(BaseModel, Generic[AnOp]):
    model_config = WIRE
    kind: Literal["call"] = "call"
    op: AnOp


class Done(BaseModel, Generic[R]):
    model_config = WIRE
    kind: Literal["done"] = "done"
    value: R


class Failed(BaseModel):
    """An exception: its type's own name (`error`), the listed type it is raised as (`base`: itself when listed,
    else its nearest listed base), its arguments and its message."""

    model_config = WIRE
    kind: Literal["failed"] = "failed"
    error: str
    base: str
    args: tuple[JsonValue, ...] = ()
    message: str = ""

    @classmethod
    def of(cls, err: BaseException) -> Failed:
        name = type(err).__name__
        base = next((k.__name__ for k in type(err).__mro__ if FAILURES.get(k.__name__) is k), "RuntimeError")
        args: tuple[Any, ...] = tuple(err.args) if base == name else (f"{name}: {err}",)
        try:
            return cls(error=name, base=base, args=args, message=str(err))
        except ValidationError:  # arguments that are not JSON
            return cls(error=name, base=base, args=(str(err),), message=str(err))

    def exception(self) -> BaseException:
        """A fresh exception of the listed type `base`, from the arguments (RuntimeError if they do not fit it)."""
        try:
            return FAILURES.get(self.base, RuntimeError)(*self.args)
        except Exception:  # noqa: BLE001 - a type whose constructor wants other arguments
            return RuntimeError(f"{self.error}: {self.message}")


def bare(err: BaseException) -> BaseException:
    """`err` as the other side of the boundary sees it."""
    return Failed.of(err).exception()


def _incoming(reply: Any) -> TypeAdapter[Any]:
    """What may arrive while an answer of type `reply` is awaited: that answer, a failure, or a call of the other
    side's (the pipe nests them), any registered op."""
    return _adapter(reply, tuple(OPS.values()))


@functools.cache
def _adapter(reply: Any, ops: tuple[type[Op[Any]], ...]) -> TypeAdapter[Any]:
    call = Call[Annotated[Union[ops], Field(discriminator="op")]]  # type: ignore[valid-type]  # noqa: UP007
    return TypeAdapter(Annotated[Union[call, Done[reply], Failed], Field(discriminator="kind")])  # noqa: UP007


def call(op: Op[Any]) -> bytes:
    return b'{"kind":"call","op":' + op.model_dump_json(warnings="error").encode() + b"}"


def answer(op: Op[Any], handler: Callable[[Op[Any]], Any]) -> bytes:
    """`handler`'s answer to `op` (or its failure), encoded. An answer not of the op's reply type is a failure."""
    try:
        return done(op, handler(op))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to the caller, bare
        return failed(err)


def done(op: Op[R], value: R) -> bytes:
    """`value` as the answer to `op` (PydanticSerializationError if it is not of the op's reply type)."""
    envelope: type[Done[Any]] = Done[type(op).reply]  # type: ignore[misc,assignment]
    return envelope.model_construct(value=value).model_dump_json(warnings="error").encode()


def failed(err: BaseException) -> bytes:
    return Failed.of(err).model_dump_json().encode()


def read(data: bytes, awaiting: type[Op[Any]] | None = None) -> Call[Op[Any]] | Done[Any] | Failed:
    """A message from the other side, checked (ValidationError, a ValueError, if it is not of the agreed form)."""
    msg: Call[Op[Any]] | Done[Any] | Failed = _incoming(None if awaiting is None else awaiting.reply
                                                         ).validate_json(data)
    return msg


def outcome(msg: Done[R] | Failed) -> R:
    """The answer a `Done` carries, or the exception a `Failed` names, raised."""
    if isinstance(msg, Failed):
        raise msg.exception()
    return msg.value


def serve(data: bytes, handler: Callable[[Op[Any]], Any]) -> bytes:
    """The encoded answer to an encoded call: a request that is not of the agreed form is answered with its failure."""
    try:
        msg = read(data)
        if not isinstance(msg, Call):
            raise ValueError(f"expected a request, got {msg.kind!r}")
    except ValueError as err:
        return failed(err)
    return answer(msg.op, handler)
