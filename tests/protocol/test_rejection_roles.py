"""A rejected output names the role whose reply it refuses: the cell adds the role of the method's last model call in
the step (in process and across the pipe alike, as the cell answers both), a method may name the role itself (an
episode's calls never reach the step), a rejection of a part of a reply says so (`part`), and each names its kind
(`malformed` unless the shared reply check named a flaw). Payloads of old runs,
without these fields, stay readable: the fields are optional."""

from __future__ import annotations

from pathlib import Path

from evoarena.api import Method, PracticeContext, TaskView, method
from evoarena.harness import Manifest
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import parse_spec
from evoarena.store import RunStore, queries


@method("test-rejecter")
class Rejecter(Method):
    """Rejects before any call (no role), then after a `critic` call (a whole reply and a part of it), then after a
    `helper` call, then names a role itself."""

    roles = ("solver", "critic", "helper")

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        ctx.reject("early", "x", "no call yet")
        reply = ctx.ask("critic", "Q: 2 + 3 =", note=False)
        assert reply is not None
        ctx.reject("whole", reply.text, "refused")
        ctx.reject("op", "one line", "refused in part", part=True)
        ctx.ask_many("helper", ["Q: 1 + 1 ="], note=False)
        ctx.reject("after helper", "y", "refused")
        ctx.reject("episode", "z", "refused", role="critic")
        ctx.reject("echoed", "Q: 2 + 3 =", "the prompt returned", kind="echo")
        try:
            ctx.reject("bad", "z", "?", kind="odd")
        except ValueError:
            ctx.log("test_kind_refused", {})
        return None


def test_a_rejection_names_the_role_of_the_last_call_and_whether_it_is_a_part(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "rejections", "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 1, "n_val": 0,
                                                                        "n_test": 2}},
        "methods": [{"name": "test-rejecter"}],
        "models": {"s": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "s", "critic": "s", "helper": "s"}, "protocol": {"select": "last"},
    })
    run_experiment(spec, tmp_path / "run", probe=False)
    store = RunStore(tmp_path / "run")
    got = [(e.payload["what"], e.payload["role"], e.payload["part"], e.payload["kind"])
           for e in queries.events(store, ["rejected_output"])]
    assert got == [("early", None, False, "malformed"), ("whole", "critic", False, "malformed"),
                   ("op", "critic", True, "malformed"), ("after helper", "helper", False, "malformed"),
                   ("episode", "critic", False, "malformed"), ("echoed", "helper", False, "echo")]
    assert len(queries.events(store, ["test_kind_refused"])) == 1  # a kind outside REJECTION_KINDS is refused


def test_the_progress_counts_the_rejections_while_the_run_goes(tmp_path: Path) -> None:
    from evoarena.protocol.progress import CellProgress
    from evoarena.protocol.progress_log import line

    spec = parse_spec({
        "name": "rejections", "benchmark": {"name": "arith", "params": {"seed": 1, "n_train": 2, "n_val": 0,
                                                                        "n_test": 1}},
        "methods": [{"name": "test-rejecter"}],
        "models": {"s": {"backend": "scripted", "model": "arith-student"}},
        "roles": {"solver": "s", "critic": "s", "helper": "s"}, "protocol": {"select": "last"},
    })
    seen: list[CellProgress] = []
    run_experiment(spec, tmp_path / "run", probe=False, progress=seen.append)
    practice = [p.rejected for p in seen if p.phase == "practice"]
    assert practice[0] == 0 and seen[-1].rejected == 12  # six per step, counted as each step ends
    assert " 12 rejected" in line(seen[-1])
