"""`load_games`: the Jericho story files and ALFWorld games under a path, one environment factory per game, and the
games ALFWorld would skip with the reason. Nothing is loaded (nor jericho or textworld imported) until a factory is
called."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evoarena.envs.alfworld import AlfworldEnv
from evoarena.envs.base import Env
from evoarena.envs.jericho_env import JerichoEnv
from evoarena.envs.loaders import PDDL_GAME, GameFileError, one_line

ROM_SUFFIXES = (".z1", ".z2", ".z3", ".z4", ".z5", ".z6", ".z7", ".z8")


@dataclass(frozen=True)
class GameList:
    """What `load_games` found: a factory per playable game (named by its path relative to the root, sorted) and
    the games it skipped with the reason."""

    games: dict[str, Callable[[], Env]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def load_games(path: str | Path, *, valid_actions: bool = False) -> GameList:
    """Every game under `path` (a directory, searched recursively, or one file): Z-machine story files
    (`.z1`–`.z8`) as `JerichoEnv`, ALFWorld games (`game.tw-pddl`) as `AlfworldEnv`. As ALFWorld does when it
    collects games, a `.tw-pddl` not marked `"solvable": true` and trials under `movable`/`Sliced` directories are
    skipped (with the reason in `skipped`). Factories build the environment on call, so nothing is loaded here;
    `valid_actions` is passed to `JerichoEnv`."""
    root = Path(path).expanduser()
    if not root.exists():
        raise GameFileError(f"load_games: no such file or directory: {root}")
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    found = GameList()
    for f in files:
        key = f.name if f == root else f.relative_to(root).as_posix()
        if f.suffix.lower() in ROM_SUFFIXES:
            found.games[key] = _factory(JerichoEnv, f, valid_actions=valid_actions)
        elif f.name == PDDL_GAME or (f == root and f.suffix == ".tw-pddl"):
            reason = _alfworld_skip(f, key)
            if reason:
                found.skipped[key] = reason
            else:
                found.games[key] = _factory(AlfworldEnv, f)
    return found


def _factory(cls: Callable[..., Env], path: Path, **kwargs: object) -> Callable[[], Env]:
    def make() -> Env:
        return cls(path, **kwargs)
    return make


def _alfworld_skip(path: Path, key: str) -> str:
    """Why ALFWorld would not play this game file ('' when it would); `key` is its path below the root."""
    if "movable" in key or "Sliced" in key:
        return "movable and sliced trials are not supported by ALFWorld"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"unreadable: {one_line(exc)}"
    if not isinstance(data, dict) or data.get("solvable") is not True:
        return "not marked solvable (ALFWorld plays only games its expert solved)"
    return ""
