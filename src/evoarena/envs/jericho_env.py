"""`JerichoEnv`: a user-supplied Z-machine story file (a Jericho ROM, `.z3`/`.z5`/`.z8`…) as an evoarena `Env`,
played through `jericho.FrotzEnv` (PyPI `jericho`, GPLv2+, installed with the `envs` extra; imported on first use).

What Jericho knows depends on the ROM. For the ~57 games it supports (`supported`: recognised by checksum) it
reports the score, the maximum, moves, won and game over, and can generate valid actions. For any other story file
— every TextWorld- or Inform-compiled game you build yourself — it reports score 0, max_score 0, moves 0, never won
and `done` only when the interpreter halts. For those, this loader ends the episode on Inform's end-of-game banner
(`*** You have won ***`, TextWorld's `*** The End ***` / `*** You lost! ***`, followed by the RESTART/RESTORE
menu): won when the banner is one of `won_banners`, lost otherwise (`detect_end=False` turns that off). The score
stays Jericho's (0).

Seeding: Jericho takes the interpreter's random seed when a game is loaded; `reset(seed)` reseeds and restarts, so
the same seed gives the same episode. `seed_policy` says which seed: `"episode"` (the seed given to `reset`, the
default), `"fixed"` (`fixed_seed` every episode) or `"walkthrough"` (the seed Jericho's walkthrough for this ROM
needs; refused for ROMs Jericho does not know). Jericho's own `FrotzEnv.seed(0)` means "the walkthrough seed, else
the clock", so seed 0 is set directly (the interpreter then seeds its generator with 0, deterministically).

Frotz ends the whole process on a fatal error (`exit(1)` for an unknown version or a short file) and can crash or
hang on a corrupt one, so the header is checked and the file is first started in a child process (`probe`)."""

from __future__ import annotations

import copy
import os
import re
import signal
import subprocess
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from evoarena.envs.base import Step
from evoarena.envs.loaders import GameFileError, existing_file, one_line
from evoarena.envs.textworld.env import clean
from evoarena.envs.textworld.games import quiet

SeedPolicy = Literal["episode", "fixed", "walkthrough"]
SEED_POLICIES: tuple[str, ...] = ("episode", "fixed", "walkthrough")
WON_BANNERS = ("You have won", "The End")  # Inform's default win, and TextWorld's win
BANNER = re.compile(r"^[ \t]*\*\*\*[ \t]*(.+?)[ \t]*\*\*\*[ \t]*$", re.M)
END_MENU = re.compile(r"\bRESTART\b.*\bRESTORE\b", re.S)  # Inform 6 and 7 both offer these after the end
MAX_ACTION_BYTES = 198  # Jericho cuts longer input
MAX_SEED = 2**31 - 1  # the interpreter's seed is a C int
INSTALL_HINT = "pip install 'evoarena[envs]' (jericho is built from source: needs cc and make)"
PROBE = ("import sys, warnings\nwarnings.simplefilter('ignore')\nimport jericho\n"
         "env = jericho.FrotzEnv(sys.argv[1], seed=1)\nenv.reset()\nenv.step('look')\n")
_PROBED: set[tuple[str, int, int]] = set()  # (path, size, mtime) already started once in a child


class JerichoMissing(ImportError):
    """jericho is not installed (it comes with the optional `envs` extra)."""


def jericho_module() -> Any:
    """The imported `jericho` package, or JerichoMissing saying how to install it."""
    try:
        import jericho
    except ImportError as exc:
        raise JerichoMissing(f"jericho is not installed ({exc}); {INSTALL_HINT}") from exc
    return jericho


def check_story_file(path: str | Path) -> Path:
    """`path` when its header is a Z-machine header (version 1–8, not shorter than the length it declares), else
    GameFileError naming the path: frotz would end the process on such a file instead of raising."""
    p = existing_file(path, "jericho")
    size = p.stat().st_size
    with p.open("rb") as f:
        head = f.read(64)
    if size < 64:
        raise GameFileError(f"jericho: {p} is not a Z-machine story file ({size} bytes, shorter than a header)")
    version = head[0]
    if not 1 <= version <= 8:
        raise GameFileError(f"jericho: {p} is not a Z-machine story file (version byte {version}, expected 1-8)")
    declared = int.from_bytes(head[0x1A:0x1C], "big") * (2 if version <= 3 else 4 if version <= 5 else 8)
    if declared > size:
        raise GameFileError(f"jericho: {p} is truncated (its header says {declared} bytes, the file has {size})")
    return p


def probe_story_file(path: Path, timeout: float = 30.0) -> None:
    """Start the story file once in a child process (load, reset, `look`) and raise GameFileError when the
    interpreter exits, crashes or hangs there; remembered per (path, size, mtime) for the life of the process."""
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key in _PROBED:
        return
    site = str(Path(jericho_module().__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([site, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    try:
        run = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True,
                             timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise GameFileError(f"jericho: {path} did not start within {timeout:g} s (the interpreter hangs on it)"
                            ) from None
    if run.returncode != 0:
        lines = [line.strip() for line in run.stderr.splitlines() if line.strip()]
        if run.returncode < 0:
            why = f"the interpreter crashed ({signal.Signals(-run.returncode).name})"
        else:
            why = lines[-1] if lines else f"exit status {run.returncode}"
        raise GameFileError(f"jericho: cannot load {path}: {why}")
    _PROBED.add(key)


class JerichoEnv:
    """A Z-machine story file as an `Env`. `reset(seed)` restarts it with the interpreter seeded by `seed_policy`;
    `step` returns the cleaned text, Jericho's score, done and info (`won`, `lost`, `steps` — commands sent this
    episode —, `moves` when Jericho knows the ROM, `banner`, `command`, `raw`, and `refused` for an action not
    sent). Jericho has no notion of lives, so none is reported."""

    def __init__(self, rom_path: str | Path, *, seed_policy: SeedPolicy = "episode", fixed_seed: int = 0,
                 valid_actions: bool = False, detect_end: bool = True, won_banners: Sequence[str] = WON_BANNERS,
                 probe: bool = True, probe_timeout: float = 30.0, name: str | None = None) -> None:
        if seed_policy not in SEED_POLICIES:
            raise ValueError(f"jericho: unknown seed_policy {seed_policy!r} (known: {', '.join(SEED_POLICIES)})")
        _check_seed(fixed_seed)
        self.path = check_story_file(rom_path)
        self.seed_policy, self.fixed_seed = seed_policy, fixed_seed
        self.valid_actions, self.detect_end = valid_actions, detect_end
        self.won_banners = tuple(b.casefold() for b in won_banners)
        self.name = name or f"jericho:{self.path.stem}"
        self.valid_actions_error = ""  # why get_valid_actions failed, once it has
        jericho_module()
        if probe:
            probe_story_file(self.path, probe_timeout)
        self._fz: Any = self._load()
        if seed_policy == "walkthrough" and not (self._fz.bindings or {}).get("seed"):
            self.close()
            raise ValueError(f"jericho: {self.path} has no walkthrough seed (Jericho does not know this ROM); "
                             "use seed_policy='episode' or 'fixed'")
        self._started = False  # reset() has been called
        self._done = self._won = self._lost = False
        self._steps = 0

    # --- the Env protocol -------------------------------------------------------------------------------------
    @property
    def supported(self) -> bool:
        """Jericho knows this ROM (score, moves, won, game over and valid actions come from it)."""
        return bool(self._require_loaded().is_fully_supported)

    @property
    def max_score(self) -> float:
        """Jericho's maximum score for the ROM: 0.0 for a ROM it does not know (no maximum is known then)."""
        return float(self._require_loaded().get_max_score())

    @property
    def score(self) -> float:
        """Jericho's current score (always 0.0 for a ROM it does not know)."""
        return float(self._require_loaded().get_score())

    @property
    def won(self) -> bool:
        return self._won

    @property
    def lost(self) -> bool:
        return self._lost

    def rng_seed(self, seed: int) -> int:
        """The interpreter seed `reset(seed)` uses under this environment's `seed_policy`."""
        if self.seed_policy == "fixed":
            return self.fixed_seed
        if self.seed_policy == "walkthrough":
            return int(self._require_loaded().bindings["seed"])
        return seed

    def reset(self, seed: int) -> str:
        """Restart the game with the interpreter seeded by `seed_policy` and return its first text."""
        _check_seed(seed)
        fz = self._fz if self._fz is not None else self._load()
        self._fz = fz
        fz._seed = self.rng_seed(seed)  # not fz.seed(): it turns 0 into the walkthrough seed or the clock
        raw, _ = fz.reset()
        self._started, self._done, self._won, self._lost, self._steps = True, False, False, False, 0
        return clean(raw)

    def step(self, action: str) -> Step:
        fz = self._require()
        if self._done:
            raise RuntimeError(f"{self.name}: the episode is over; reset first")
        command, refused = _normalise(action)
        if refused is not None:
            text = f"Action refused ({refused}). Nothing happened; send one command such as 'look'."
            return Step(text, self.score, False, self._info("", "", refused=refused))
        with quiet():
            raw, _, jericho_done, _ = fz.step(command)
        self._steps += 1
        banner = end_banner(raw)
        if fz.is_fully_supported:
            self._won = bool(fz.victory())
            self._lost = bool(jericho_done) and not self._won
            self._done = bool(jericho_done)
        elif self.detect_end and banner:
            self._won = banner.casefold() in self.won_banners
            self._lost, self._done = not self._won, True
        else:
            self._done = bool(fz.game_over())  # the interpreter halted (the game quit)
        return Step(clean(raw), self.score, self._done, self._info(command, raw, banner=banner))

    def admissible_actions(self) -> list[str] | None:
        """Jericho's valid actions (sorted) when `valid_actions` is on and Jericho knows the ROM; None otherwise,
        and None from the first failure on (warned once: it needs spacy's `en_core_web_sm`, which Jericho tries to
        download). Slow: Jericho tries candidate actions on saved states."""
        if not self.valid_actions or self.valid_actions_error or not self.supported:
            return None
        fz = self._require()
        if self._done:
            return []
        try:
            with quiet():
                actions = fz.get_valid_actions()
        except Exception as exc:
            self.valid_actions_error = one_line(exc)
            warnings.warn(f"{self.name}: get_valid_actions failed, admissible actions are off: "
                          f"{self.valid_actions_error}", RuntimeWarning, stacklevel=2)
            return None
        return sorted(set(actions))

    def clone(self) -> JerichoEnv:
        """An independent copy of the current state: a new interpreter on the same file given this one's saved
        state (Jericho's get_state/set_state, as `FrotzEnv.copy`)."""
        fz = self._require()
        twin = copy.copy(self)
        with quiet():
            twin._fz = fz.copy()
        return twin

    # --- beyond the protocol ----------------------------------------------------------------------------------
    def walkthrough(self) -> list[str]:
        """Jericho's walkthrough for the ROM ([] when it has none): an oracle for tests and scripted actors; it
        replays only under `seed_policy='walkthrough'`."""
        with quiet():
            return list(self._require_loaded().get_walkthrough())

    def close(self) -> None:
        """Stop the interpreter; a later `reset` loads the file again."""
        if self._fz is not None:
            self._fz.close()
        self._fz, self._started = None, False

    def __enter__(self) -> JerichoEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self) -> Any:
        jericho = jericho_module()
        try:
            with quiet():
                return jericho.FrotzEnv(str(self.path), seed=1)  # reset() sets the episode's seed
        except Exception as exc:
            raise GameFileError(f"jericho: cannot load {self.path}: {one_line(exc)}") from None

    def _require_loaded(self) -> Any:
        if self._fz is None:
            self._fz = self._load()
        return self._fz

    def _require(self) -> Any:
        if not self._started or self._fz is None:
            raise RuntimeError(f"{self.name}: call reset(seed) first")
        return self._fz

    def _info(self, command: str, raw: str, *, banner: str = "", refused: str | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"won": self._won, "lost": self._lost, "steps": self._steps, "command": command,
                                "raw": raw, "banner": banner}
        if self._fz.is_fully_supported:
            info["moves"] = int(self._fz.get_moves())
        if refused:
            info["refused"] = refused
        return info


def end_banner(text: str) -> str:
    """The text of Inform's end-of-game banner (`*** You have won ***` gives "You have won") when `text` ends the
    game — the last `*** … ***` line, followed by the RESTART/RESTORE menu — else ''."""
    found = list(BANNER.finditer(text))
    if found and END_MENU.search(text, found[-1].end()):
        return found[-1].group(1)
    return ""


def _check_seed(seed: object) -> None:
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"jericho: a seed must be an int in 0..{MAX_SEED}, got {seed!r}")


def _normalise(action: str) -> tuple[str, str | None]:
    """(the command to send, None) or ('', why it is refused). Commands chained with '.' or 'then' are sent as
    they are: the game's parser runs them, and no tracker beside it can go stale (unlike TextWorldEnv)."""
    command = action.strip()
    if not command:
        return "", "the action is empty"
    if "\n" in command or "\r" in command:
        return "", "one line per step: the interpreter would read each line as a separate command"
    size = len(command.encode("utf-8"))
    if size > MAX_ACTION_BYTES:
        return "", f"the command is {size} bytes long; at most {MAX_ACTION_BYTES}"
    return command, None
