"""The seeded grid maze: same seed, same maze; every cell reachable; walls stop moves; partial observation; the
goal wins with score 1; clones are independent; the shortest path is BFS's."""

from __future__ import annotations

import random

import pytest

from evoarena.envs import Env, Maze
from evoarena.envs.maze import MOVES, bfs, carve


def test_the_same_seed_gives_the_same_maze_and_another_seed_another() -> None:
    a, b = Maze(), Maze()
    a.reset(3)
    b.reset(3)
    assert a._open == b._open
    b.reset(4)
    assert a._open != b._open
    assert isinstance(a, Env)


def test_every_cell_is_reachable_and_walls_are_symmetric() -> None:
    opened = carve(10, 8, random.Random(0))
    back = {"north": "south", "south": "north", "east": "west", "west": "east"}
    for cell, moves in opened.items():
        for m in moves:
            n = (cell[0] + MOVES[m][0], cell[1] + MOVES[m][1])
            assert n in opened and back[m] in opened[n]
    assert all(bfs(opened, (0, 0), cell) >= 0 for cell in opened)
    # a perfect maze has n*n - 1 passages; `loops` adds exactly that many more
    passages = sum(len(m) for m in opened.values()) // 2
    assert passages == 100 - 1 + 8


def test_walls_block_moves_and_the_goal_wins() -> None:
    maze = Maze(size=4, loops=0)
    maze.reset(1)
    blocked = next(m for m in MOVES if m not in maze._open[maze.position])
    step = maze.step(blocked)
    assert step.info["bumped"] and maze.position == (0, 0) and "bump" in step.observation
    assert maze.step("fly").info["valid"] is False
    # follow a shortest route to the goal
    while not maze.won:
        here = maze.shortest_path()
        move = next(m for m in maze.admissible_actions() or [] if _after(maze, m) == here - 1)
        step = maze.step(move)
    assert step.done and step.score == 1.0 and maze.won
    with pytest.raises(RuntimeError, match="over"):
        maze.step("north")


def test_observation_is_local() -> None:
    maze = Maze()
    text = maze.reset(0)
    assert "Open directions:" in text and str(maze.goal) not in text
    assert set(maze.admissible_actions() or []) == maze._open[(0, 0)]


def test_a_clone_moves_on_its_own() -> None:
    maze = Maze()
    maze.reset(2)
    twin = maze.clone()
    twin.step((twin.admissible_actions() or [])[0])
    assert maze.position == (0, 0) and twin.position != (0, 0)


def _after(maze: Maze, move: str) -> int:
    twin = maze.clone()
    twin.step(move)
    return twin.shortest_path()
