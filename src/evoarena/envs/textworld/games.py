"""Seeded TextWorld games, generated in process and cached on disk.

A game is named by its family (`custom`, the challenges `tw-cooking`, `tw-treasure_hunter`, `tw-coin_collector`,
evoarena's own `tw-keydoor` with its transfer variants, or the ALFWorld-like `tw-household`), the family's settings
and a seed. `make_game` generates it with TextWorld's Python API (no `tw-make` subprocess, no network) the first time
and reuses the files afterwards: generation costs about a second or two per game (Inform 7 compiles it), replaying a
cached one costs nothing.

The cache key is (TextWorld's version, this module's format, family, every setting with defaults filled, seed), so a
new TextWorld release or a changed generator never reuses an old file. Each game is one directory holding `game.z8`
(the story file), `game.json` (TextWorld's sidecar: without it there are no admissible commands, scores or wins)
and `game.ni` (the Inform 7 source), written into a temporary directory next to it and published with one atomic
rename, so two processes generating the same game at once both end with the same complete directory.

`textworld` is imported only when a game is generated or played: it is an optional extra
(`pip install 'evoarena[envs]'`) and importing it costs about a second and changes process-wide warning filters."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoarena.envs.textworld.household import TASKS as HOUSEHOLD_TASKS
from evoarena.envs.textworld.keydoor import VARIANTS as KEYDOOR_VARIANTS

Setting = bool | int | str | None
FORMAT = 1  # bump when this module, keydoor.py, household.py or data/ change what (family, settings, seed) generates
CACHE_ENV = "EVOARENA_TEXTWORLD_DIR"
INSTALL_HINT = ("pip install 'evoarena[envs]' (textworld==1.7.0; its dependency jericho is built from source and "
                "needs cc and make)")


class TextWorldMissing(ImportError):
    """textworld is not installed (it is the optional `envs` extra)."""


class GameError(RuntimeError):
    """A game could not be generated or started; the message is one line naming the game."""


@dataclass(frozen=True)
class Family:
    """A game family: its settings with their types, defaults (a setting without one is required) and allowed
    values where TextWorld restricts them."""

    name: str
    kinds: Mapping[str, type]
    defaults: Mapping[str, Setting]
    choices: Mapping[str, tuple[Setting, ...]] = field(default_factory=dict)
    doc: str = ""

    def settings(self, given: Mapping[str, Any] | None) -> dict[str, Setting]:
        """`given` checked and completed with the defaults; a ValueError names the first bad setting."""
        given = dict(given or {})
        unknown = sorted(set(given) - set(self.kinds))
        if unknown:
            raise ValueError(f"textworld {self.name}: unknown setting {unknown[0]!r} (known: {', '.join(self.kinds)})")
        out: dict[str, Setting] = {}
        for key, kind in self.kinds.items():
            if key not in given and key not in self.defaults:
                raise ValueError(f"textworld {self.name}: setting {key!r} is required ({kind.__name__})")
            value = given.get(key, self.defaults.get(key))
            ok = (value is None and self.defaults.get(key, 0) is None) or (
                isinstance(value, kind) and (kind is bool or not isinstance(value, bool)))
            if not ok:
                raise ValueError(f"textworld {self.name}: setting {key!r} must be {kind.__name__}, got {value!r}")
            if key in self.choices and value not in self.choices[key]:
                raise ValueError(f"textworld {self.name}: setting {key!r} must be one of "
                                 f"{list(self.choices[key])}, got {value!r}")
            out[key] = value
        return out


FAMILIES: dict[str, Family] = {f.name: f for f in [
    Family("custom", {"world_size": int, "nb_objects": int, "quest_length": int},
           {"world_size": 5, "nb_objects": 10, "quest_length": 5},
           doc="TextWorld's generic generator (`tw-make custom`): rooms, objects, quest length"),
    Family("tw-cooking", {"recipe": int, "take": int, "go": int, "open": bool, "cook": bool, "cut": bool,
                          "drop": bool, "recipe_seed": int, "split": str},
           {"recipe": 1, "take": 0, "go": 1, "open": False, "cook": False, "cut": False, "drop": False,
            "recipe_seed": 0, "split": None},
           {"go": (1, 6, 9, 12), "split": (None, "train", "valid", "test")},
           doc="the First TextWorld Problems cooking games: gather, prepare and eat a recipe's ingredients"),
    Family("tw-treasure_hunter", {"level": int}, {},
           doc="find a given object among distractors; levels 1-30 (5, 10 then 20 rooms; doors, then locks)"),
    Family("tw-coin_collector", {"level": int}, {},
           doc="walk a chain of rooms to the coin; levels 1-300 (distractor rooms from level 101)"),
    Family("tw-keydoor", {"rooms": int, "variant": str}, {"rooms": 4, "variant": "base"},
           {"variant": KEYDOOR_VARIANTS},
           doc="evoarena's transfer family: take the treasure behind a locked door; variants move the key, change "
               "which key opens the door, or both, on the same map with the same quest"),
    Family("tw-household", {"task": str, "objects": int}, {"task": "pick", "objects": 4},
           {"task": HOUSEHOLD_TASKS},
           doc="ALFWorld-like household tasks in one room: pick, look (under the desk lamp), clean, heat, cool, "
               "pick-two; `objects` distractors"),
]}


@dataclass(frozen=True)
class GameFiles:
    """One generated game on disk: its directory, story file and sidecar, and what it was made from. `cached` is
    True when `make_game` reused an existing directory instead of generating."""

    directory: Path
    family: str
    seed: int
    settings: Mapping[str, Setting]
    cached: bool

    @property
    def z8(self) -> Path:
        return self.directory / "game.z8"

    @property
    def json(self) -> Path:
        return self.directory / "game.json"


def textworld_module() -> Any:
    """The imported `textworld` package (with its generator and challenges), or TextWorldMissing saying how to
    install it."""
    try:
        import textworld
        import textworld.challenges
        import textworld.generator
    except ImportError as exc:
        raise TextWorldMissing(f"textworld is not installed ({exc}); {INSTALL_HINT}") from exc
    return textworld


@contextmanager
def quiet() -> Iterator[None]:
    """Silence Jericho's UnsupportedGameWarning, raised each time a TextWorld story file is loaded: it is expected
    (score, moves and won come from TextWorld's tracker, not Jericho). `import textworld` filters it process-wide,
    but pytest and `warnings.catch_warnings` blocks reset that filter."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Game .* is not fully supported")
        yield


def default_cache_dir() -> Path:
    """$EVOARENA_TEXTWORLD_DIR, else <$EVOARENA_CACHE_DIR or ~/.cache/evoarena>/textworld."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("EVOARENA_CACHE_DIR") or str(Path.home() / ".cache" / "evoarena")
    return Path(base) / "textworld"


def game_key(version: str, family: str, settings: Mapping[str, Setting], seed: int) -> str:
    """The cache key's digest: TextWorld's version, FORMAT, family, completed settings, seed."""
    blob = json.dumps({"textworld": version, "format": FORMAT, "family": family, "settings": dict(settings),
                       "seed": seed}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def make_game(family: str, seed: int, settings: Mapping[str, Any] | None = None,
              cache_dir: str | Path | None = None) -> GameFiles:
    """The game `family` × `settings` × `seed`, generated on first use and read from `cache_dir` (default
    `default_cache_dir()`) afterwards. Unknown families or bad settings raise ValueError, a failed generation
    GameError, a missing textworld TextWorldMissing — each in one line."""
    if family not in FAMILIES:
        raise ValueError(f"textworld: unknown family {family!r} (known: {', '.join(FAMILIES)})")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"textworld {family}: seed must be an int >= 0, got {seed!r}")
    full = FAMILIES[family].settings(settings)
    tw = textworld_module()
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    final = root / f"textworld-{tw.__version__}" / family / f"seed{seed}-{game_key(tw.__version__, family, full, seed)}"
    if _complete(final):
        return GameFiles(final, family, seed, full, cached=True)
    _check_builtin_data(tw)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        try:
            with quiet():
                _generate(tw, family, full, seed, tmp / "game.z8")
        except Exception as exc:
            raise GameError(f"textworld: could not generate {family} seed={seed} {full}: {one_line(exc)}") from None
        (tmp / "spec.json").write_text(json.dumps({"textworld": tw.__version__, "format": FORMAT, "family": family,
                                                   "settings": full, "seed": seed}, indent=1, sort_keys=True))
        tmp.chmod(0o755)  # mkdtemp makes it private; the published game is an ordinary cache directory
        _publish(tmp, final)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return GameFiles(final, family, seed, full, cached=False)


def _check_builtin_data(tw: Any) -> None:
    """TextWorld loads its default knowledge base (logic and text grammars) from `./textworld_data` when the working
    directory had one at import time (ALFWorld checkouts do), which would change every game under an unchanged
    cache key: refuse to generate then."""
    data = tw.generator.data
    if os.path.realpath(data.KnowledgeBase.default().logic_path) != os.path.realpath(data.LOGIC_DATA_PATH):
        raise GameError(f"textworld: its default knowledge base came from {data.KnowledgeBase.default().logic_path} "
                        "(a textworld_data folder in the working directory), not its built-in data; generate games "
                        "from another directory")


def _complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in ("game.z8", "game.json", "spec.json"))


def _publish(tmp: Path, final: Path) -> None:
    """Move the finished `tmp` to `final` in one rename. If another process published first, keep its copy; an
    incomplete leftover (a crash, a manual deletion) is moved aside and replaced."""
    for _ in range(3):
        try:
            os.rename(tmp, final)
            return
        except OSError:
            if _complete(final):
                return
            stale = final.with_name(f".stale-{final.name}-{os.getpid()}")
            try:
                os.rename(final, stale)
            except OSError:
                continue
            shutil.rmtree(stale, ignore_errors=True)
    raise GameError(f"textworld: could not publish the game into {final}")


def _generate(tw: Any, family: str, settings: Mapping[str, Setting], seed: int, path: Path) -> None:
    """Generate and compile one game into `path` (+ the .json and .ni beside it)."""
    options = tw.GameOptions()
    options.seeds = seed
    options.path = str(path)
    options.force_recompile = True  # compile_game's own "already compiled" check asserts on tw-cooking
    game = _BUILDERS.get(family, _challenge)(tw, family, settings, seed, options)
    tw.generator.compile_game(game, options)


def _custom(tw: Any, family: str, settings: Mapping[str, Setting], seed: int, options: Any) -> Any:
    options.nb_rooms, options.nb_objects = settings["world_size"], settings["nb_objects"]
    options.quest_length = settings["quest_length"]  # min = max = depth, as `tw-make custom --quest-length`
    return tw.generator.make_game(options)


def _challenge(tw: Any, family: str, settings: Mapping[str, Setting], seed: int, options: Any) -> Any:
    _, make, _ = tw.challenges.CHALLENGES[family]
    return make(settings=dict(settings), options=options)


def _keydoor(tw: Any, family: str, settings: Mapping[str, Setting], seed: int, options: Any) -> Any:
    from evoarena.envs.textworld.keydoor import make_keydoor

    return make_keydoor(tw, settings, seed, options)


def _household(tw: Any, family: str, settings: Mapping[str, Setting], seed: int, options: Any) -> Any:
    from evoarena.envs.textworld.household import make_household

    return make_household(tw, settings, seed, options)


_BUILDERS: dict[str, Callable[[Any, str, Mapping[str, Setting], int, Any], Any]] = {
    "custom": _custom, "tw-keydoor": _keydoor, "tw-household": _household}


def one_line(exc: BaseException, limit: int = 300) -> str:
    """`Type: first non-empty line of the message`, cut to `limit` characters (TextWorld's compile errors span
    dozens of lines)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.strip().startswith("-=")]
    text = f"{type(exc).__name__}: {lines[0] if lines else repr(exc)}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
