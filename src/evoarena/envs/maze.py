"""A seeded, partially observable grid maze (10 × 10 by default): the fast environment for mechanism tests and
Continual Harness's minimal experiment (seed 000 §3: a locally visible grid maze instead of a Pokémon ROM).

The maze is a perfect maze carved by a seeded depth-first search (one path between any two cells), then
`loops` extra walls removed so more than one route exists. The agent starts in one corner and must reach the goal
in the opposite one; it sees only the walls of its own cell and whether the goal is within `view` steps in a
straight open line. Actions: `north`, `south`, `east`, `west`; bumping a wall costs a step and changes nothing.
Score: 1 on reaching the goal (max_score 1). `shortest_path` gives the optimal length (BFS) for path-cost metrics."""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from evoarena.envs.base import Step

MOVES = {"north": (-1, 0), "south": (1, 0), "east": (0, 1), "west": (0, -1)}
Cell = tuple[int, int]


@dataclass
class Maze:
    """The maze environment (`Env`). `seed` at reset picks the layout: the same seed, the same maze."""

    size: int = 10
    loops: int = 8
    view: int = 3
    name: str = "maze"
    _open: dict[Cell, set[str]] = field(default_factory=dict, repr=False)
    _pos: Cell = (0, 0)
    _goal: Cell = (0, 0)
    _done: bool = False
    _seed: int | None = None

    @property
    def max_score(self) -> float:
        return 1.0

    @property
    def won(self) -> bool:
        return self._pos == self._goal

    @property
    def position(self) -> Cell:
        return self._pos

    @property
    def goal(self) -> Cell:
        return self._goal

    def reset(self, seed: int) -> str:
        if seed != self._seed:
            self._open = carve(self.size, self.loops, random.Random(f"maze:{self.size}:{seed}"))
            self._seed = seed
        self._pos, self._goal, self._done = (0, 0), (self.size - 1, self.size - 1), False
        return self.describe()

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("maze: the episode is over; reset first")
        move = action.strip().lower()
        if move not in MOVES:
            return Step(f"Unknown action {action!r}. Actions: {', '.join(MOVES)}.\n{self.describe()}", self.score,
                        False, {"valid": False})
        bumped = move not in self._open[self._pos]
        if not bumped:
            dr, dc = MOVES[move]
            self._pos = (self._pos[0] + dr, self._pos[1] + dc)
        self._done = self.won
        text = ("You bump into a wall.\n" if bumped else "") + self.describe()
        return Step(text, self.score, self._done, {"valid": True, "bumped": bumped})

    @property
    def score(self) -> float:
        return 1.0 if self.won else 0.0

    def admissible_actions(self) -> list[str] | None:
        return [m for m in MOVES if m in self._open[self._pos]]

    def clone(self) -> Maze:
        twin = Maze(self.size, self.loops, self.view, self.name)
        twin._open, twin._pos, twin._goal, twin._done, twin._seed = (self._open, self._pos, self._goal, self._done,
                                                                       self._seed)
        return twin

    def describe(self) -> str:
        """What the agent sees: its cell, its open directions, and the goal if it is in sight."""
        if self.won:
            return "You reached the goal."
        exits = [m for m in MOVES if m in self._open[self._pos]]
        text = f"You are in a maze cell. Open directions: {', '.join(exits)}."
        for m in exits:
            cell = self._pos
            for _ in range(self.view):
                if m not in self._open[cell]:
                    break
                cell = (cell[0] + MOVES[m][0], cell[1] + MOVES[m][1])
                if cell == self._goal:
                    return text + f" You see the goal to the {m}."
        return text

    def shortest_path(self, start: Cell | None = None) -> int:
        """Steps of the shortest route from `start` (default: the current cell) to the goal."""
        return bfs(self._open, start or self._pos, self._goal)


def carve(size: int, loops: int, rng: random.Random) -> dict[Cell, set[str]]:
    """A perfect maze by randomised depth-first search, then `loops` walls knocked through at random."""
    if size < 2:
        raise ValueError("maze: size must be at least 2")
    opened: dict[Cell, set[str]] = {(r, c): set() for r in range(size) for c in range(size)}
    back = {"north": "south", "south": "north", "east": "west", "west": "east"}
    stack, seen = [(0, 0)], {(0, 0)}
    while stack:
        cell = stack[-1]
        options = [(m, (cell[0] + d[0], cell[1] + d[1])) for m, d in MOVES.items()]
        options = [(m, n) for m, n in options if n in opened and n not in seen]
        if not options:
            stack.pop()
            continue
        move, nxt = rng.choice(options)
        opened[cell].add(move)
        opened[nxt].add(back[move])
        seen.add(nxt)
        stack.append(nxt)
    walls = sorted((cell, m) for cell in opened for m, d in MOVES.items()
                   if (cell[0] + d[0], cell[1] + d[1]) in opened and m not in opened[cell])
    for cell, m in rng.sample(walls, min(loops, len(walls))):
        d = MOVES[m]
        opened[cell].add(m)
        opened[(cell[0] + d[0], cell[1] + d[1])].add(back[m])
    return opened


def bfs(opened: dict[Cell, set[str]], start: Cell, goal: Cell) -> int:
    """Length of the shortest route between two cells (every cell is reachable in a carved maze)."""
    dist = {start: 0}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            return dist[cell]
        for m in opened[cell]:
            nxt = (cell[0] + MOVES[m][0], cell[1] + MOVES[m][1])
            if nxt not in dist:
                dist[nxt] = dist[cell] + 1
                queue.append(nxt)
    raise ValueError(f"maze: {goal} is not reachable from {start}")
