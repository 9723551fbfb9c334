"""`Method.read_reply`: the part of a solver reply the benchmark parses, asked of the method in process and across the
pipe (`ReadReply`); the default hands the benchmark the whole reply and sends nothing across."""

from __future__ import annotations

from pathlib import Path

import pytest
from reply_methods import Fielded, Plain

from evoarena.api import Method, Parsed
from evoarena.protocol.boundary.isolated import isolated
from evoarena.protocol.boundary.ops import OPS, ReadReply
from evoarena.protocol.solve.solve import solve


def test_the_op_is_registered() -> None:
    assert OPS["read_reply"] is ReadReply


@pytest.mark.parametrize("transport", ["in_process", "pipe"])
def test_read_reply_crosses_both_transports(tmp_path: Path, transport: str) -> None:
    """The child's answer comes back as the same `Parsed` the method returns in process, error and all."""
    method: Method = Fielded()
    if transport == "pipe":
        method = isolated(Fielded, {}, harness=tmp_path / "h", masked=[], confinement="none")
    try:
        assert method.read_reply({"suffix": "!"}, "think\n[[ ## answer ## ]]\n42") == Parsed("42!")
        assert method.read_reply({}, "42") == Parsed(None, "no answer field")
    finally:
        close = getattr(method, "close", None)
        if close:
            close()


def test_an_isolated_default_reader_sends_nothing(tmp_path: Path) -> None:
    """A method without its own reader is not asked per reply (the stand-in answers identity itself)."""
    method = isolated(Plain, {}, harness=tmp_path / "h", masked=[], confinement="none")
    try:
        method._exchange = None  # type: ignore[assignment]  # any exchange would fail
        assert method.read_reply({}, " 7") == Parsed(" 7")
    finally:
        del method._exchange  # type: ignore[attr-defined]
        method.close()


class _Solver:
    def __init__(self, text: str) -> None:
        self.text = text

    def complete(self, messages: object, params: object, *, sample_index: int = 0) -> object:
        class C:
            text = self.text
            call_id = 3
        return C()


def test_solve_parses_what_the_method_read() -> None:
    """The benchmark parses the method's reading; the attempt keeps the raw reply; an unreadable one is a parse
    error naming the method's reason."""
    from evoarena.benchmarks.arith.benchmark import ArithBenchmark

    bench = ArithBenchmark(seed=0, n_train=2, n_val=1, n_test=1)
    task = bench.build()[0].view()
    raw = "first 5\n[[ ## answer ## ]]\n12"
    got = solve(Fielded(), bench, {}, task, _Solver(raw))  # type: ignore[arg-type]
    assert (got.text, got.answer, got.parse_error) == (raw, "12", None)
    plain = solve(Plain(), bench, {}, task, _Solver(raw))  # type: ignore[arg-type]
    assert plain.answer == "5"  # the default: the benchmark reads the whole reply
    bad = solve(Fielded(), bench, {}, task, _Solver("12"))  # type: ignore[arg-type]
    assert (bad.answer, bad.parse_error) == (None, "reply: no answer field")
