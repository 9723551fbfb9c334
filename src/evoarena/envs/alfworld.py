"""`AlfworldEnv`: a user-supplied ALFWorld game as an evoarena `Env`, played the way ALFWorld plays it — through
TextWorld's PDDL environment (`textworld.envs.PddlEnv`, textworld 1.7.0), which needs the Fast Downward planner
(PyPI `fast-downward-textworld`, GPLv3+, installed with the `envs` extra). Neither `alfworld` nor its data is
needed: only the game files, which ALFWorld's data download holds one per trial directory.

A game is `game.tw-pddl`: JSON with `pddl_domain` (ALFWorld's domain), `pddl_problem` (the trial's scene and goal)
and `grammar` (the text grammar, the task sentence written in), plus `solvable`. A trial directory also holds
`traj_data.json` (its `task_type` is read when present). As ALFWorld does, entity ids are renamed for play with
its numbering (`Mug_bar__plus_00_dot_10…` → `mug 1`, `alfworld_names`), the game's only randomness, so `reset(seed)`
gives the same episode for every seed unless `shuffle_names` numbers instances in the order `seed` draws (ALFWorld's
training-time domain randomisation). Score 1 when won else 0; max_score 1; never lost (TextWorld's PDDL environment
has no losing state). A command is carried out only when it is exactly one of the admissible commands; anything
else gets "Nothing happens." and changes nothing (`info["valid"]`).

Security: TextWorld evaluates the `{…}` expressions of a game's grammar with Python's `eval`, so a game file can run
code. Load only game files you trust (ALFWorld's own, or your own)."""

from __future__ import annotations

import copy
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evoarena.envs.base import Step
from evoarena.envs.loaders import PDDL_GAME, GameFileError, existing_file, one_line

INSTALL_HINT = ("pip install 'evoarena[envs]' (textworld==1.7.0 and fast-downward-textworld==20.6.4, which pip "
                "builds from source with cmake and g++, about 2 minutes once)")
KEYS = ("pddl_domain", "pddl_problem", "grammar")
TASK_PREFIX = "Your task is to:"
BANNER = re.compile(r"\A\s*-=[^\n]*=-[ \t]*\n+")  # "-= Welcome to TextWorld, ALFRED! =-" opening the first text
ESCAPES = {"_minus_": "-", "_plus_": "+", "_dot_": ".", "_comma_": ","}


class PddlMissing(ImportError):
    """TextWorld's PDDL environment cannot run: textworld or the Fast Downward planner is not installed."""


def pddl_module() -> Any:
    """TextWorld's `textworld.envs.pddl.pddl` module with the planner loaded, or PddlMissing saying what to
    install."""
    try:
        import textworld.envs.pddl.pddl as pddl
    except ImportError as exc:
        raise PddlMissing(f"ALFWorld games need textworld's PDDL environment ({exc}); {INSTALL_HINT}") from exc
    if pddl.fast_downward_missing:
        raise PddlMissing(f"ALFWorld games need the Fast Downward planner (module fast_downward); {INSTALL_HINT}")
    return pddl


def game_file(path: str | Path) -> Path:
    """The game file of `path`: the file itself, or `game.tw-pddl` in a trial directory; GameFileError otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        if not (p / PDDL_GAME).is_file():
            raise GameFileError(f"alfworld: no {PDDL_GAME} in {p.resolve()} (ALFWorld's data download holds one "
                                "per trial directory, beside traj_data.json)")
        p = p / PDDL_GAME
    return existing_file(p, "alfworld")


def read_game(path: Path) -> dict[str, Any]:
    """The game file's JSON, checked to hold the PDDL domain, problem and grammar as text."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise GameFileError(f"alfworld: {path} is not an ALFWorld game file (not JSON: {one_line(exc)})") from None
    missing = [k for k in KEYS if not isinstance(data, dict) or not isinstance(data.get(k), str)]
    if missing:
        raise GameFileError(f"alfworld: {path} is not an ALFWorld game file: no {missing[0]!r} text "
                            f"(expected {', '.join(KEYS)})")
    return dict(data)


def alfworld_names(ids: Iterable[str], rng: random.Random | None = None) -> dict[str, str]:
    """Play names for PDDL object ids, numbered as ALFWorld's demangler numbers them: `<class>_bar_<…>` becomes
    `<class> <n>` (`sink…_bar_…sinkbasin` becomes `sinkbasin <n>`), the instances of a class numbered from the
    highest down in sorted id order (in `rng`'s shuffled order when given); an id without `_bar_` keeps its text,
    unescaped (ALFWorld leaves a trailing space there; not kept)."""
    order = sorted(ids)
    if rng is not None:
        rng.shuffle(order)

    def unescape(text: str) -> str:
        for code, char in ESCAPES.items():
            text = text.replace(code, char)
        return text

    def kind(entity: str) -> str:
        return unescape(entity.split("_bar_", 1)[0]) + ("basin" if "basin" in entity else "")

    left = Counter(kind(e) for e in order if "_bar_" in e)
    names = {}
    for entity in order:
        if "_bar_" in entity:
            names[entity] = f"{kind(entity)} {left[kind(entity)]}"
            left[kind(entity)] -= 1
        else:
            names[entity] = unescape(entity)
    return names


@contextmanager
def _argv_kept() -> Iterator[None]:
    """Fast Downward's translator overwrites `sys.argv` each time a problem is translated (load and reset)."""
    saved = list(sys.argv)
    try:
        yield
    finally:
        sys.argv[:] = saved


class AlfworldEnv:
    """An ALFWorld game as an `Env`: `reset(seed)` starts the trial (the seed only matters with `shuffle_names`);
    `step` returns the game's text, the score (1 once won), done (won) and info (`won`, `moves` — commands carried
    out —, `valid`, `command`, `raw`)."""

    def __init__(self, game: str | Path, *, shuffle_names: bool = False, name: str | None = None) -> None:
        self.path = game_file(game)
        self.data = read_game(self.path)
        self.shuffle_names = shuffle_names
        self.name = name or f"alfworld:{self.path.parent.name if self.path.name == PDDL_GAME else self.path.stem}"
        self.solvable: bool | None = self.data.get("solvable")
        self.task_type = _task_type(self.path.parent / "traj_data.json")
        self._tw: Any = self._load()
        self._state: Any = None
        self._first = ""
        self._seed = 0
        self._history: list[str] = []  # the commands carried out this episode, for clone()
        self._done = False

    # --- the Env protocol -------------------------------------------------------------------------------------
    @property
    def max_score(self) -> float:
        return 1.0

    @property
    def won(self) -> bool:
        return bool(self._state is not None and self._state["won"])

    @property
    def score(self) -> float:
        return 1.0 if self.won else 0.0

    @property
    def goal(self) -> str:
        """The task as the first text states it ("put a clean mug in cabinet."), '' before the first reset."""
        for line in self._first.splitlines():
            if line.strip().startswith(TASK_PREFIX):
                return line.strip().removeprefix(TASK_PREFIX).strip()
        return ""

    def reset(self, seed: int) -> str:
        """Start the trial from its initial state and return its first text (the welcome banner removed)."""
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"alfworld: a seed must be an int >= 0, got {seed!r}")
        tw = self._tw if self._tw is not None else self._load()
        self._tw = tw
        self._name_entities(random.Random(f"alfworld-names:{seed}") if self.shuffle_names else None)
        try:
            with _argv_kept():
                self._state = tw.reset()
        except Exception as exc:
            raise GameFileError(f"alfworld: cannot start {self.path}: {one_line(exc)}") from None
        self._first, self._seed, self._history, self._done = str(self._state["feedback"]), seed, [], False
        return _clean(self._first)

    def step(self, action: str) -> Step:
        self._require()
        if self._done:
            raise RuntimeError(f"{self.name}: the episode is over; reset first")
        command = action.strip()
        try:
            self._state, _, done = self._tw.step(command)
        except Exception as exc:  # the game's grammar cannot describe what happened
            self._done = True
            raise GameFileError(f"alfworld: {self.path} failed on {command!r}: {one_line(exc)}") from None
        valid = self._state["_last_action"] is not None
        if valid:
            self._history.append(command)
        self._done = bool(done)
        raw = str(self._state["feedback"])
        info = {"won": self.won, "moves": int(self._state["moves"]), "valid": valid, "command": command, "raw": raw}
        return Step(_clean(raw), self.score, self._done, info)

    def admissible_actions(self) -> list[str] | None:
        """The commands that do something now (TextWorld's, sorted), or [] once the episode is over."""
        return [] if self._done else list(self._require()["admissible_commands"] or [])

    def clone(self) -> AlfworldEnv:
        """An independent copy of the current state: the planner's state cannot be copied, so a new environment on
        the same game replays this episode's commands (the game is deterministic)."""
        self._require()
        twin = copy.copy(self)
        twin._tw, twin._history = None, []
        twin.reset(self._seed)
        for command in self._history:
            twin.step(command)
        return twin

    # --- beyond the protocol ----------------------------------------------------------------------------------
    def policy(self) -> list[str]:
        """A shortest winning plan from the current state as commands (Fast Downward replans, as ALFWorld's
        "planner" expert does): an oracle for scripted actors and tests, never for the agent under evaluation."""
        self._require()
        if self._done:
            return []
        return list(self._tw._pddl_state.replan(self._tw._entity_infos))

    def close(self) -> None:
        """Drop the game; a later `reset` loads it again. The copy of the planner library each environment loads
        stays mapped until the process ends (about 1 MB): unloading it (`fast_downward.close_lib`) while another
        copy is loaded crashes the process at exit (C++ static destructors), and TextWorld never unloads it either."""
        self._tw, self._state, self._done = None, None, False

    def __enter__(self) -> AlfworldEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self) -> Any:
        pddl = pddl_module()
        import textworld

        tw = pddl.PddlEnv(textworld.EnvInfos(admissible_commands=True, won=True, moves=True))
        try:
            with _argv_kept():
                tw.load(copy.deepcopy(self.data))
        except Exception as exc:
            raise GameFileError(f"alfworld: cannot load {self.path}: {one_line(exc)}") from None
        return tw

    def _name_entities(self, rng: random.Random | None) -> None:
        infos: Mapping[str, Any] = self._tw._entity_infos
        for entity, text in alfworld_names(infos, rng).items():
            infos[entity].name = text

    def _require(self) -> Any:
        if self._state is None:
            raise RuntimeError(f"{self.name}: call reset(seed) first")
        return self._state


def _clean(text: str) -> str:
    """The game's text without the welcome banner of the first screen, stripped."""
    return BANNER.sub("", text).strip()


def _task_type(path: Path) -> str | None:
    """ALFWorld's task type (`pick_and_place_simple`, …) from a trial's traj_data.json, None when there is none."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("task_type")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
