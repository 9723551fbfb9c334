"""The episode runner: one budget for environment actions and meta-actions, every step recorded, meta-actions
answered by their handler without moving the environment."""

from __future__ import annotations

from collections.abc import Sequence

from evoarena.envs import Decision, Maze, StepRecord, auc, late_mean, run_episode, success_by_family


class Scripted:
    def __init__(self, actions: list[str]) -> None:
        self.actions = actions
        self.seen: list[str] = []

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        self.seen.append(observation)
        return Decision(self.actions[len(history) % len(self.actions)], {"actor": 1})


class Optimal:
    """Takes a shortest route (clones the maze to look ahead)."""

    def __init__(self, maze: Maze) -> None:
        self.maze = maze

    def decide(self, observation: str, history: Sequence[StepRecord], admissible: Sequence[str] | None) -> Decision:
        best = min(admissible or [], key=lambda m: _after(self.maze, m))
        return Decision(best)


def _after(maze: Maze, move: str) -> int:
    twin = maze.clone()
    twin.step(move)
    return twin.shortest_path()


def test_meta_actions_share_the_budget_and_do_not_move_the_env() -> None:
    notes: list[str] = []

    def note(arg: str) -> str:
        notes.append(arg)
        return f"noted: {arg}"

    maze = Maze()
    actor = Scripted(["note[try east]", "east", "recall[x]"])
    episode = run_episode(maze, actor, seed=0, max_steps=7, meta={"note": note})
    assert len(episode.steps) == 7 and episode.stopped == "budget"
    kinds = [s.kind for s in episode.steps]
    assert kinds == ["meta", "env", "env", "meta", "env", "env", "meta"]  # recall has no handler: an env action
    assert notes == ["try east"] * 3 and episode.steps[0].observation == "noted: try east"
    assert episode.steps_by_kind() == {"meta": 3, "env": 4} and episode.calls_by_type() == {"actor": 7}
    assert actor.seen[1] == "noted: try east"  # the actor is shown the meta-action's answer next


def test_an_optimal_actor_wins_in_the_shortest_path_and_stops_at_done() -> None:
    maze = Maze()
    maze.reset(5)
    shortest = maze.shortest_path()
    episode = run_episode(maze, Optimal(maze), seed=5, max_steps=100)
    assert episode.won and episode.stopped == "done" and len(episode.steps) == shortest
    assert episode.final_score == 1.0 and episode.score_curve[-1] == 1.0 and episode.score_curve[0] == 0.0
    assert all(s.admissible for s in episode.steps)


def test_metrics() -> None:
    assert auc([0, 5, 10], max_score=10) == 0.5 and auc([], 1) == 0.0
    assert late_mean([0, 0, 0, 1, 1], fraction=0.4) == 1.0 and late_mean([2.0], 0.1) == 2.0
    assert success_by_family([("pick", True), ("pick", False), ("heat", True)]) == {"heat": 1.0, "pick": 0.5}
