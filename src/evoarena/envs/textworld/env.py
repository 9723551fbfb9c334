"""`TextWorldEnv`: a TextWorld game family as an evoarena `Env`.

The environment is built for one family and its settings; `reset(seed)` plays the game of that seed (generated once,
then read from the cache, see games.py) from its initial state, so the same seed gives the same game and the same
observations every time. Under it TextWorld runs the compiled `.z8` in Jericho's Z-machine, with TextWorld's tracker
(the `.json` sidecar) supplying the admissible commands, the score, the shortest remaining winning plan and won/lost.

What the agent is shown is cleaned: the ASCII-art banner of the first screen, the `>` prompt with its padded status
line (`-= Kitchen =-0/3`) and Inform's closing "Would you like to RESTART…" menu are removed, and runs of blank lines
are squeezed. The untouched text is in `info["raw"]`.

Actions are normalised before they reach the game: surrounding whitespace, a leading `>` and a trailing `.`/`!` are
dropped and inner whitespace is squeezed. An action that chains commands (several lines, `;`, the word "then", a
`.` followed by more words), lists objects with commas, or is longer than 198 bytes (where Jericho would silently cut
it) is refused: it is never sent, the step returns an observation saying why and the state does not change. These
are refused because the game executes every part while TextWorld's tracker records only the first, so the admissible
commands, the plan and the score would silently go stale (docs/notes/textworld-spike.md §3; measured here for
"take X, Y": both taken, one tracked). `take X and Y from Z` and `take all` are tracked correctly and allowed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evoarena.envs.base import Step
from evoarena.envs.textworld.games import (
    FAMILIES,
    GameError,
    GameFiles,
    Setting,
    make_game,
    one_line,
    quiet,
    textworld_module,
)

MAX_ACTION_BYTES = 198  # Jericho truncates longer input (TruncatedInputActionWarning)
CHAIN = re.compile(r"[;,]|\bthen\b|\.\s*\w", re.I)
END_MENU = re.compile(r"\n*Would you like to RESTART, RESTORE a saved game, QUIT or UNDO the last command\?\s*$")


def clean(text: str) -> str:
    """The game's text as the agent should read it: no banner (leading lines without a letter or digit), no
    trailing `>` prompt + status line, no end-of-game menu, no indentation (`*** The End ***` is centred with 55
    spaces), at most one blank line in a row."""
    head, sep, tail = text.rpartition("\n>")
    if sep and "\n" not in tail:
        text = head
    text = END_MENU.sub("", text)
    lines = text.split("\n")
    while lines and not re.search(r"[A-Za-z0-9]", lines[0]):
        lines.pop(0)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.strip() for line in lines)).strip()


def normalise_action(action: str) -> tuple[str, str | None]:
    """(the command to send, None) or (the input, why it is refused)."""
    lines = [line.strip() for line in action.strip().splitlines() if line.strip()]
    if len(lines) > 1:
        return action, "one command per step: the action has several lines"
    command = " ".join((lines[0] if lines else "").lstrip(">").split()).rstrip(".!").strip()
    if not command:
        return action, "the action is empty"
    if CHAIN.search(command):
        return action, "one command per step: no ';', ',', 'then' or '.' between commands or objects"
    size = len(command.encode("utf-8"))
    if size > MAX_ACTION_BYTES:
        return action, f"the command is {size} bytes long; at most {MAX_ACTION_BYTES}"
    return command, None


class TextWorldEnv:
    """A TextWorld family as an `Env`: `reset(seed)` starts the game of `seed` (same seed, same game, same initial
    state); `step` returns the cleaned text, the cumulative score, done (won or lost) and info (`won`, `lost`,
    `moves`, `raw`, and `refused` when the action was not sent)."""

    def __init__(self, family: str = "custom", settings: Mapping[str, Any] | None = None, *,
                 cache_dir: str | Path | None = None, name: str | None = None) -> None:
        if family not in FAMILIES:
            raise ValueError(f"textworld: unknown family {family!r} (known: {', '.join(FAMILIES)})")
        self.family = family
        self.settings: dict[str, Setting] = FAMILIES[family].settings(settings)
        self.cache_dir = cache_dir
        self.name = name or f"textworld:{family}"
        self.game: GameFiles | None = None
        self._tw: Any = None  # textworld's environment (TWInform7 over Jericho)
        self._state: Any = None  # textworld's last GameState
        self._done = False

    # --- the Env protocol -------------------------------------------------------------------------------------
    @property
    def max_score(self) -> float:
        """The game's maximum score (0.0 before the first reset: no game is loaded yet)."""
        return float(self._state["max_score"]) if self._state is not None else 0.0

    @property
    def won(self) -> bool:
        return bool(self._state is not None and self._state["won"])

    @property
    def lost(self) -> bool:
        return bool(self._state is not None and self._state["lost"])

    @property
    def score(self) -> float:
        """The episode's cumulative score so far."""
        return float(self._state["score"] or 0) if self._state is not None else 0.0

    def reset(self, seed: int) -> str:
        """Start the game of `seed` from its initial state (generating it on first use) and return its first text."""
        game = make_game(self.family, seed, self.settings, self.cache_dir)
        if self.game is None or game.directory != self.game.directory or self._tw is None:
            self.close()
            self._tw = _start(game)
            self.game = game
        self._tw.seed(seed)
        self._state = self._tw.reset()
        self._done = False
        return clean(self._state["feedback"])

    def step(self, action: str) -> Step:
        state = self._require()
        if self._done:
            raise RuntimeError(f"{self.name}: the episode is over; reset first")
        command, refused = normalise_action(action)
        if refused is not None:
            text = f"Action refused ({refused}). Nothing happened; send a single command such as 'go north'."
            return Step(text, self.score, False, self._info(state, "", refused=refused))
        self._state, _, done = self._tw.step(command)
        self._done = bool(done)
        return Step(clean(self._state["feedback"]), self.score, self._done, self._info(self._state, command))

    def admissible_actions(self) -> list[str] | None:
        """TextWorld's admissible commands for the current state (sorted), or [] once the episode is over."""
        return [] if self._done else list(self._require()["admissible_commands"] or [])

    def clone(self) -> TextWorldEnv:
        """An independent copy of the current state, tracker included (TextWorld's `env.copy()`, ~0.1–0.3 s)."""
        self._require()
        twin = TextWorldEnv(self.family, self.settings, cache_dir=self.cache_dir, name=self.name)
        twin.game, twin._done = self.game, self._done
        with quiet():
            twin._tw = self._tw.copy()
        twin._state = twin._tw.state
        return twin

    # --- beyond the protocol ----------------------------------------------------------------------------------
    def policy(self) -> list[str]:
        """The shortest winning plan from the current state as commands (TextWorld's `policy_commands`): an oracle
        for scripted actors, verifiers and tests; never show it to an agent being evaluated."""
        return [] if self._done else list(self._require()["policy_commands"] or [])

    @property
    def objective(self) -> str:
        """The quest as the game states it."""
        return str(self._state["objective"] or "") if self._state is not None else ""

    def close(self) -> None:
        """Stop the interpreter (also done when the object is collected)."""
        if self._tw is not None:
            self._tw.close()
        self._tw, self._state, self._done = None, None, False

    def __enter__(self) -> TextWorldEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require(self) -> Any:
        if self._state is None:
            raise RuntimeError(f"{self.name}: call reset(seed) first")
        return self._state

    @staticmethod
    def _info(state: Any, command: str, refused: str | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {"won": bool(state["won"]), "lost": bool(state["lost"]), "moves": int(state["moves"]),
                                "command": command, "raw": "" if refused else str(state["feedback"])}
        if refused:
            info["refused"] = refused
        return info


INFOS = ("admissible_commands", "policy_commands", "max_score", "score", "won", "lost", "moves", "objective")


def _start(game: GameFiles) -> Any:
    """textworld.start on the game's .z8 (the .json beside it turns the tracker on), or GameError in one line."""
    tw = textworld_module()
    try:
        with quiet():
            return tw.start(str(game.z8), request_infos=tw.EnvInfos(**dict.fromkeys(INFOS, True)))
    except Exception as exc:
        raise GameError(f"textworld: could not start {game.z8}: {one_line(exc)}") from None
