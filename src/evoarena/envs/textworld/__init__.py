"""TextWorld games as evoarena environments (issue 15): seeded generation with an on-disk cache (`make_game`), the
`Env` adapter (`TextWorldEnv`), `tw-keydoor`, a family with key-moved / door-rule variants for transfer tests, and
`tw-household`, ALFWorld-like household tasks (pick, look, clean, heat, cool, pick-two).

Needs the optional extra `pip install 'evoarena[envs]'` (textworld 1.7.0, MIT, which pulls jericho, GPLv2+, built
from source); this package imports `textworld` only when a game is generated or played."""

from evoarena.envs.textworld.env import TextWorldEnv, clean, normalise_action
from evoarena.envs.textworld.games import FAMILIES, GameError, GameFiles, TextWorldMissing, default_cache_dir, make_game

__all__ = ["FAMILIES", "GameError", "GameFiles", "TextWorldEnv", "TextWorldMissing", "clean", "default_cache_dir",
           "make_game", "normalise_action"]
