"""User-supplied game files as environments: the error both loaders raise for a file they cannot use, and the
checks they share (`library.load_games` lists a directory of games).

Neither loader ships or downloads games: the user points them at ROMs (`jericho_env.JerichoEnv`) or at ALFWorld's
`game.tw-pddl` files (`alfworld.AlfworldEnv`). Importing this module imports neither jericho nor textworld."""

from __future__ import annotations

from pathlib import Path

PDDL_GAME = "game.tw-pddl"


class GameFileError(ValueError):
    """A game file is missing or cannot be loaded; the message is one line naming the path."""


def one_line(exc: BaseException, limit: int = 300) -> str:
    """`Type: first non-empty line of the message`, cut to `limit` characters."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = f"{type(exc).__name__}: {lines[0] if lines else repr(exc)}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def existing_file(path: str | Path, kind: str) -> Path:
    """`path` as an absolute Path when it is a readable file, else GameFileError naming it."""
    p = Path(path).expanduser()
    if not p.exists():
        raise GameFileError(f"{kind}: no such file: {p}")
    if not p.is_file():
        raise GameFileError(f"{kind}: not a file: {p}")
    return p.resolve()
