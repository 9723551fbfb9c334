"""The codec: what arrives is checked against its op's types (no coercion, no unknown field), an answer must be of
the op's reply type, and an exception crosses as a fresh one of a listed type, without its traceback or attributes."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evoarena.api import Attempt, TestSplitLocked
from evoarena.harness import HarnessPathError
from evoarena.models import Message
from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.ops import Grade, MakeAttempt, Practice
from evoarena.protocol.budget import BudgetExhausted


def _call(op: dict[str, object]) -> bytes:
    return json.dumps({"kind": "call", "op": op}).encode()


def test_a_request_is_read_back_as_its_op() -> None:
    op = MakeAttempt(task_id="t", tree={"a.md": "x"}, sample_index=2, submit=False)
    msg = codec.read(codec.call(op))
    assert isinstance(msg, codec.Call) and msg.op == op


@pytest.mark.parametrize("op", [
    {"op": "grade", "task_id": "t", "answer": None, "number": True},  # a bool is not a number
    {"op": "grade", "task_id": "t", "answer": 3, "number": 1},  # nor a number a text
    {"op": "grade", "task_id": "t", "answer": None, "number": 1, "extra": 1},  # no unknown field
    {"op": "grade", "task_id": "t"},  # nothing missing
    {"op": "complete_many", "role": "r", "prompts": ["a", "b"], "params": {}, "sample_indices": [0]},  # paired
    {"op": "no_such_op"},
])
def test_a_request_not_of_the_agreed_form_is_refused(op: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        codec.read(_call(op))
    failure = codec.read(codec.serve(_call(op), lambda _: None), Grade)
    assert isinstance(failure, codec.Failed) and isinstance(failure.exception(), ValueError)


def test_an_answer_is_read_back_as_the_ops_reply_type() -> None:
    attempt = Attempt("t", "text", "4", messages=(Message("user", "q"),), number=2, tree_after={"a": "b"})
    op = MakeAttempt(task_id="t", submit=True)
    back = codec.outcome(codec.read(codec.answer(op, lambda _: attempt), MakeAttempt))  # type: ignore[arg-type]
    assert back == attempt and back is not attempt and isinstance(back.messages, tuple)


def test_an_answer_not_of_the_reply_type_is_a_failure() -> None:
    op = Grade(task_id="t", answer=None, number=1)
    msg = codec.read(codec.answer(op, lambda _: "not feedback"), Grade)
    assert isinstance(msg, codec.Failed)
    with pytest.raises(ValidationError):  # nor is such an answer read
        codec.read(json.dumps({"kind": "done", "value": {"intent": 3}}).encode(), Practice)


class Custom(LookupError):
    pass


class Odd(BaseException):
    pass


@pytest.mark.parametrize(("err", "raised", "text"), [
    (KeyError("k"), KeyError, "'k'"),
    (TestSplitLocked("no"), TestSplitLocked, "no"),
    (BudgetExhausted("spent"), BudgetExhausted, "spent"),
    (HarnessPathError("../x"), HarnessPathError, "../x"),
    (Custom("c"), LookupError, "Custom: c"),  # not listed: its nearest listed base, named
    (KeyboardInterrupt("cut"), KeyboardInterrupt, "cut"),  # a kill stays a kill: the run stops, to be resumed
    (Odd("o"), RuntimeError, "Odd: o"),  # no listed base at all
    (ValueError(object()), ValueError, "<object object"),  # arguments that are not JSON: the message
])
def test_an_exception_crosses_as_a_fresh_one_of_a_listed_type(err: BaseException, raised: type[BaseException],
                                                             text: str) -> None:
    try:
        raise err
    except BaseException as caught:  # noqa: BLE001 - as the serving side does
        data = codec.failed(caught)
    with pytest.raises(raised) as info:
        codec.outcome(codec.read(data, Grade))  # type: ignore[arg-type]
    assert type(info.value) is raised and text in str(info.value)
    assert info.value is not err and info.value.__traceback__ is not None and info.value.__cause__ is None
    assert vars(info.value) == {}


def test_nothing_on_the_boundary_unpickles() -> None:
    """Both sides read only JSON: no module of the boundary, nor the step service, imports pickle or marshal."""
    src = Path(__file__).resolve().parents[3] / "src/evoarena/protocol"
    modules = [*sorted((src / "boundary").glob("*.py")), src / "run/step_service.py"]
    for module in modules:
        imported = {alias.name for node in ast.walk(ast.parse(module.read_text()))
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
        assert not imported & {"pickle", "marshal", "dill", "cloudpickle"}, module.name
