"""AHE's rules checked against their sources: infra failures and time-outs count as fails (the paper) or stay apart
as exceptions (the released code), and the seed's two single-component ablations are arms a spec names."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoarena.harness import ChangeManifest, score_round
from evoarena.methods.ahe import Ahe
from evoarena.methods.ahe.components import resolve_components
from evoarena.protocol.catalog import build_method
from evoarena.spec import load_spec

RECIPES = Path(__file__).resolve().parents[2] / "recipes"
REWARDS: dict[str, list[float | None]] = {"infra": [None, None], "half": [1.0, None], "ok": [1.0, 1.0]}


def ahe(**params: object) -> Ahe:
    method = build_method("ahe", dict(params))
    assert isinstance(method, Ahe)
    return method


def test_infra_failures_and_time_outs_count_as_fail_by_default() -> None:
    """seeds-digest-batch2.md §1 (a) "Paper setup" (seed 000 §2): "infra failures & timeouts count as fail". A
    rollout with no output (a provider error or a time-out: reward None) makes its task `fail`, not `exception`."""
    assert ahe().params.infra_failures == "fail"
    assert ahe().outcomes(REWARDS) == {"infra": "fail", "half": "fail", "ok": "pass"}


def test_the_released_rule_keeps_them_apart() -> None:
    """harness-systems-as-released.md § AHE / `compute_stats` @96f3b64: a task is `exception` iff every recorded
    rollout was one (a task with one exception and one pass is a fail either way)."""
    assert ahe(infra_failures="exception").outcomes(REWARDS) == {"infra": "exception", "half": "fail", "ok": "pass"}


@pytest.mark.parametrize(("rule", "flipped", "verdict"), [("fail", ("infra",), "EFFECTIVE"),
                                                          ("exception", (), "INEFFECTIVE")])
def test_a_fix_of_an_infra_failing_task_is_credited_only_under_the_paper_rule(rule: str, flipped: tuple[str, ...],
                                                                                verdict: str) -> None:
    """seeds-digest-batch2.md §1 (a) Scoring: flipped = fail→pass, fixed = predicted ∩ flipped; the released
    transitions call exception→pass `infra_recovered`, not a flip — so the rule decides whether the change fixed it."""
    method = ahe(infra_failures=rule)
    before, after = method.outcomes(REWARDS), method.outcomes({**REWARDS, "infra": [1.0, 1.0]})
    manifest = ChangeManifest.from_dict({"changes": [{"id": "c1", "type": "new", "files": ["system.md"],
                                                      "predicted_fixes": ["infra"]}]})
    score = score_round(manifest, before, after)
    assert score.flipped == flipped and score.changes[0].verdict.value == verdict


def test_bad_infra_rule_is_refused() -> None:
    with pytest.raises(ValueError, match="methods.ahe.params"):
        build_method("ahe", {"infra_failures": "ignore"})


@pytest.mark.parametrize("recipe", ["ahe-arith", "ahe-repair"])
def test_the_seeds_single_component_ablations_are_arms(recipe: str) -> None:
    """seeds-digest-batch2.md §1 (b) (seed 000 §2 minimal experiment): "Keep the two ablations memory-only and
    prompt-only". Both recipes name them next to full AHE, with the full arm's other params, each editing only its
    one component (Table 3's single-component rows)."""
    arms = {m.label or m.name: m for m in load_spec(RECIPES / f"{recipe}.yaml").methods if m.name == "ahe"}
    assert set(arms) == {"ahe", "ahe-memory-only", "ahe-prompt-only"}
    full = dict(arms["ahe"].params)
    for label, only in (("ahe-memory-only", "memory/long_term.md"), ("ahe-prompt-only", "system.md")):
        params = dict(arms[label].params)
        assert resolve_components(params.pop("components")) == (only,)
        assert params == full
