"""EvoTest's small transfer test on TextWorld (seed 000 §8 l.105: "另将钥匙位置/门规则更换作小型迁移测试" — also change
the key's position / the door rule as a small transfer test; digest batch 2 §4 l.45: "Small transfer test: move the
key / change a door rule"): the `textworld` benchmark's `transfer` option makes each test game a twin of a train game
(tw-keydoor, the same seed), and TextWorld's own game files (`textworld.Game.load` on the sidecar, its world facts)
show that the twin differs from its train game by exactly the stated facts and nothing else.

One benchmark of 1 train game and its 3 twins (rooms: 3) is built once for the module: 4 games, ~1.5 s each to
generate (Inform 7 compiles each), then cached — the whole file takes ~10 s, the price of real game files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evoarena.api import Task
from evoarena.benchmarks.textworld import TextWorldBenchmark
from evoarena.envs.textworld import make_game
from evoarena.envs.textworld.keydoor import layout

TWINS = ["key-moved", "door-rule", "key-moved-door-rule"]
Fact = tuple[str, ...]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TextWorldBenchmark, list[Task], Path]]:
    """The benchmark, its tasks and its game cache (the episodes' environments read the cache from the environment
    variable, so it stays set for the module)."""
    pytest.importorskip("textworld", reason="textworld is not installed: pip install 'evoarena[envs]'")
    cache = tmp_path_factory.mktemp("tw_twins")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVOARENA_TEXTWORLD_DIR", str(cache))
        bench = TextWorldBenchmark(seed=3, n_train=1, n_val=0, n_test=3, family="tw-keydoor",
                                   settings={"rooms": 3}, transfer=TWINS)
        yield bench, bench.build(), cache


def facts(cache: Path, seed: int, variant: str) -> set[Fact]:
    """The game's initial world as TextWorld stores it (game.json), each fact as (predicate, entity names)."""
    import textworld

    game = textworld.Game.load(str(make_game("tw-keydoor", seed, {"rooms": 3, "variant": variant}, cache).json))
    names = {key: info.name or key for key, info in game.infos.items()}
    return {(f.name, *(names.get(v.name, v.name) for v in f.arguments)) for f in game.world.facts}


def test_the_test_split_holds_the_twins_of_the_train_game(twins: tuple[TextWorldBenchmark, list[Task], Path]) -> None:
    """Test game i is train game i // k under `transfer[i % k]`: the same game seed (same map, objects and quest),
    its own source id (`tw-keydoor/<variant>-<seed>`, so the split check sees three new games), and its episode
    plays that variant's game."""
    bench, tasks, _ = twins
    train = [t for t in tasks if t.split == "train"]
    test = [t for t in tasks if t.split == "test"]
    assert len(train) == 1 and [t.meta["variant"] for t in test] == TWINS
    seed = train[0].meta["game_seed"]
    assert train[0].meta["variant"] == "base" and train[0].source_id == f"tw-keydoor/base-{seed}"
    assert all(t.meta["game_seed"] == seed and t.meta["twin_of"] == train[0].id for t in test)
    assert [t.source_id for t in test] == [f"tw-keydoor/{v}-{seed}" for v in TWINS]
    assert [bench.episode(t.view())[0].settings["variant"] for t in tasks] == ["base", *TWINS]


def test_a_twin_differs_from_its_train_game_exactly_as_stated(
        twins: tuple[TextWorldBenchmark, list[Task], Path]) -> None:
    """Read from TextWorld's game files: `key-moved` moves the first key into the other container (in another
    room); `door-rule` makes the door match the second key; `key-moved-door-rule` does both to the key that now
    fits (the second key leaves the supporter for the other container). Every other fact — rooms, exits, the
    locked door, furniture, treasure, player — is the same, and so is the objective."""
    import textworld

    _, tasks, cache = twins
    seed = tasks[0].meta["game_seed"]
    world = layout(3, seed)
    first, second = world["keys"]
    box, other, table, door = world["container"], world["other"], world["supporter"], world["door"]
    stated: dict[str, tuple[set[Fact], set[Fact]]] = {  # variant: (facts gone, facts added)
        "key-moved": ({("in", first, box)}, {("in", first, other)}),
        "door-rule": ({("match", first, door)}, {("match", second, door)}),
        "key-moved-door-rule": ({("on", second, table), ("match", first, door)},
                                {("in", second, other), ("match", second, door)}),
    }
    base = facts(cache, seed, "base")
    rooms = {f[1]: f[2] for f in base if f[0] == "at"}
    assert rooms[box] != rooms[other]  # "moved" means another room, not only another container
    assert ("locked", door) in base and ("match", first, door) in base and ("in", first, box) in base
    for variant, (gone, added) in stated.items():
        twin = facts(cache, seed, variant)
        assert (base - twin, twin - base) == (gone, added), variant
    objectives = {textworld.Game.load(str(make_game("tw-keydoor", seed, {"rooms": 3, "variant": v}, cache).json))
                  .objective for v in ["base", *TWINS]}
    assert len(objectives) == 1


def test_the_train_games_plan_loses_every_twin(twins: tuple[TextWorldBenchmark, list[Task], Path]) -> None:
    """What the test measures: a harness that replays the train game by rote does not win a twin (it reaches the door
    without the key that fits, or finds the container empty). Each twin's own plan (its walkthrough, replayed through
    TextWorld's logic when the game is built) is another, short enough for the study's 20 steps. Plays 3 games in
    Jericho (~1 s each)."""
    bench, tasks, _ = twins
    env, seed = bench.episode(tasks[0].view())
    env.reset(seed)
    rote = env.policy()
    for task in tasks[1:]:
        twin, twin_seed = bench.episode(task.view())
        twin.reset(twin_seed)
        assert twin.policy() != rote and len(twin.policy()) <= 20
        for command in rote:
            if twin.step(command).done:
                break
        assert not twin.won, task.meta["variant"]
