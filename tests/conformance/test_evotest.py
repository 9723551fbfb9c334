"""EvoTest against its seed: the small transfer test (seed 000 §8, the minimal experiment's last sentence,
"另将钥匙位置/门规则更换作小型迁移测试" — change the key's position / the door rule as a small transfer test; digest
batch 2 §4 (b) l.45: "Small transfer test: move the key / change a door rule"). The game-file check of each twin is
tests/benchmarks/textworld/test_transfer_twins.py; UCB and the evolver are tests/methods/test_evotest_released.py."""

from __future__ import annotations

from pathlib import Path

from evoarena.envs.textworld.keydoor import PLACES
from evoarena.spec import load_spec

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "evotest-transfer.yaml"


def changes(variant: str) -> set[str]:
    """What a tw-keydoor variant changes from `base`, read off its row of PLACES: `key` when a key lies elsewhere,
    `rule` when another key opens the door."""
    first, second, opener = PLACES[variant]
    base_first, base_second, base_opener = PLACES["base"]
    return ({"key"} if (first, second) != (base_first, base_second) else set()) | (
        {"rule"} if opener != base_opener else set())


def test_the_variants_change_what_their_names_say() -> None:
    """`key-moved` moves a key and keeps the rule, `door-rule` changes the rule and moves nothing, the composite does
    both — and moves the key that now opens the door (it is not left where base's decoy lay)."""
    assert [changes(v) for v in PLACES] == [set(), {"key"}, {"rule"}, {"key", "rule"}]
    first, second, opener = PLACES["key-moved-door-rule"]
    assert (first, second)[opener] != (PLACES["base"][0], PLACES["base"][1])[opener]


def test_the_recipe_tests_the_moved_key_the_changed_rule_and_both() -> None:
    """The recipe's test split is the practice game's twins under every change the seed names, alone and together,
    and its EvoTest arm is the released one (`score_scale: raw`) beside static and JitRL's paper arm."""
    spec = load_spec(RECIPE)
    params = spec.benchmark.params
    assert params["family"] == "tw-keydoor" and params["n_train"] == 1
    assert [changes(v) for v in params["transfer"]] == [{"key"}, {"rule"}, {"key", "rule"}]
    assert params["n_test"] == len(params["transfer"])  # one test game per twin
    arms = {m.label: m for m in spec.methods}
    assert set(arms) == {"static", "evotest", "jitrl-paper"}
    assert arms["evotest"].params["score_scale"] == "raw" and arms["jitrl-paper"].params["variant"] == "paper"
    assert spec.protocol.epochs == 10  # the seed's 10 episodes
