"""SkillProx against its source, seed 001 (`/work/shared/seeds/001_f1206bab053aced8.txt`; official code not
available, harness-systems-as-released.md l.85). The forward loop, Prox's audit and shrink are exercised end to end in
tests/methods/test_skillprox.py; here the constants and the two gates are tied to the seed's lines."""

from __future__ import annotations

from types import SimpleNamespace

from evoarena.methods.skillprox.common import Batch, TaskResult
from evoarena.methods.skillprox.forward import gate
from evoarena.methods.skillprox.method import SkillProx
from evoarena.methods.skillprox.prox import candidates
from evoarena.methods.skillprox.state import UnitAudit


def batch(*marks: tuple[bool, float]) -> Batch:
    return Batch(tuple(TaskResult(SimpleNamespace(id=f"t{i}"), p, s, "", "")  # type: ignore[arg-type]
                       for i, (p, s) in enumerate(marks)))


def test_the_papers_tolerances_and_soft_cap() -> None:
    """Seed 001 l.71 ("默认 τ=-0.001") and l.81 ("δ_h=0, δ_c=0.02, ρ=0.10")."""
    p = SkillProx.Params()
    assert (p.tau, p.delta_h, p.delta_c, p.rho) == (-0.001, 0.0, 0.02, 0.10)


def test_the_papers_training_setup() -> None:
    """Seed 001 l.99: at most 40 initially failing train tasks, batch size 4, ten planned updates, early stop after
    four all-correct batches, a utility audit on 20 validation tasks; l.55: at most three candidates per iteration;
    l.57: the last six accepted/rejected summaries."""
    p = SkillProx.Params()
    assert (p.max_train, p.batch_size, p.iterations, p.early_stop, p.val_size) == (40, 4, 10, 4, 20)
    assert (p.max_candidates, p.history) == (3, 6)
    assert (p.forward, p.diagnosis, p.prox) == ("closed", True, True)


def test_the_forward_gate_needs_hard_and_cell_both_not_to_drop() -> None:
    """Seed 001 l.53: Gate_fwd = 1[H(cand) ≥ H(X_k)] · 1[C(cand) ≥ C(X_k)] on the same batch."""
    base = batch((True, 1.0), (False, 0.5))
    assert gate(base, batch((True, 1.0), (False, 0.5)))  # equal passes
    assert gate(base, batch((True, 1.0), (True, 1.0)))
    assert gate(base, batch((False, 0.9), (True, 1.0)))  # a different task passes: H holds, C rises
    assert not gate(base, batch((True, 1.0), (False, 0.4)))  # C drops
    assert not gate(base, batch((False, 1.0), (False, 1.0)))  # H drops though C rises


def test_prox_candidates_are_below_tau_in_lexicographic_cell_then_hard_order() -> None:
    """Seed 001 l.71: "只纳入明显负效用单元" (u_cell < τ); "<_lex 表示先按 cell 效用、再按 hard 效用升序"."""
    def audit(uid: str, u_cell: float, u_hard: float) -> UnitAudit:
        return UnitAudit(uid=uid, kind="L2", name=uid, chars=1, H=0, C=0, u_hard=u_hard, u_cell=u_cell)

    units = [audit("a", -0.001, 0.0), audit("b", -0.2, 0.1), audit("c", -0.2, -0.1), audit("d", -0.05, 0.0),
             audit("e", 0.3, -1.0)]
    assert [u.uid for u in candidates(units, -0.001)] == ["c", "b", "d"]
