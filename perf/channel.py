"""Performance benchmark: the cost of one request across the method boundary. `in process`: a `channel.Port` round
trip to a server thread that answers at once (what every `ctx` call pays on top of its work); `codec`: encoding and
checking a request and its answer without a transport (what a method in its own process pays on top of the pipe).
Two requests: `Grade` (a short answer: Feedback) and `MakeAttempt` (a 4 kB answer: an Attempt with its messages).

Each figure is the best of `--repeat` runs of `--calls` requests.

Usage: python perf/channel.py [--calls 3000] [--repeat 9] [--smoke]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from evoarena.api import Attempt, Feedback
from evoarena.models import Message
from evoarena.protocol.boundary import codec
from evoarena.protocol.boundary.channel import serving
from evoarena.protocol.boundary.ops import Grade, MakeAttempt, Op, Server, handles

FEEDBACK = Feedback(0.5, False, "wrong answer")
ATTEMPT = Attempt("t1", "x" * 2000, "42", messages=(Message("system", "s" * 1000), Message("user", "u" * 1000)))
REQUESTS: dict[str, Op[Any]] = {"Grade": Grade(task_id="t1", answer="42", number=1),
                                "MakeAttempt": MakeAttempt(task_id="t1", submit=True)}


class Instant(Server):
    """Answers at once with fixed values."""

    @handles(Grade)
    def _grade(self, op: Grade) -> Feedback:
        return FEEDBACK

    @handles(MakeAttempt)
    def _attempt(self, op: MakeAttempt) -> Attempt:
        return ATTEMPT


def per_call_us(fn: Callable[[], Any], calls: int, repeat: int) -> float:
    for _ in range(min(calls, 200)):
        fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs)  # the best run: the machine is shared, noise only adds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--smoke", action="store_true", help="a seconds-long run")
    args = parser.parse_args()
    calls, repeat = (200, 1) if args.smoke else (args.calls, args.repeat)
    server = Instant()
    print(f"{'request':<12} {'in process us/call':>19} {'codec us/call':>14}")
    with serving(server.answer) as port:
        for name, op in REQUESTS.items():
            ported = per_call_us(lambda op=op: port.call(op), calls, repeat)  # type: ignore[misc]
            coded = per_call_us(lambda op=op: codec.outcome(codec.read(  # type: ignore[misc]
                codec.serve(codec.call(op), server.answer), type(op))), calls, repeat)
            print(f"{name:<12} {ported:>19.1f} {coded:>14.1f}")


if __name__ == "__main__":
    main()
