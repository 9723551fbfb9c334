"""`tw-household`: ALFWorld-like household tasks built on TextWorld — the issue's six task families `pick`, `look`,
`clean`, `heat`, `cool` and `pick-two`.

ALFWorld (Shridhar et al., 2021) renders ALFRED scenes as TextWorld games with its own PDDL domain; its data are
not obtainable here, so this family rebuilds the six task types on TextWorld itself. `data/household.twl` adds what
TextWorld's built-in logic lacks: household objects that are dirty or cleaned and tepid, hot or cold, and ALFWorld's
appliance verbs (`clean X with sink basin`, `heat X with microwave`, `cool X with fridge`, `use desk lamp`), each a
TextWorld rule with a matching Inform 7 action, so the tracker's admissible commands, plan, score and win stay exact.

A game is one room (ALFWorld's scenes are one room too) with the four appliances and five receptacles drawn by the
seed (closed containers and open supporters), the task's object(s) and `objects` distractors placed on or in them.
The goals, as ALFWorld states them ("Your task is to: …"):

- `pick`: put an X in/on a receptacle;      `pick-two`: put two Xs (two colours of one thing) in/on it;
- `clean` / `heat` / `cool`: put a clean / hot / cool X in/on it (clean with the sink basin, heat with the
  microwave, cool with the fridge, the object in hand);
- `look`: look at an X under the desk lamp (hold it while the lamp is on).

Deliberate differences from ALFWorld: no `go to <receptacle>` navigation (everything is within reach, as in
TextWorld), appliances act on the object in hand without opening them, and object names carry no instance numbers
(`mug`, not `mug 1`); the two objects of `pick-two` differ by colour. Room and object texts are written here (no
TextWorld grammar), so they read alike across seeds; what varies is what is where."""

from __future__ import annotations

import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evoarena.envs.textworld.keydoor import Plan, replay_plan

LOGIC = Path(__file__).with_name("data") / "household.twl"
TASKS = ("pick", "look", "clean", "heat", "cool", "pick-two")
CONTAINERS = ["cabinet", "drawer", "cupboard", "safe"]
SUPPORTERS = ["countertop", "shelf", "dining table", "armchair", "sofa"]
THINGS = {  # ALFWorld's object classes for each task type (a subset)
    "pick": ["book", "cellphone", "keychain", "pillow", "vase", "soap bar", "candle", "newspaper", "spray bottle"],
    "look": ["book", "alarm clock", "cellphone", "credit card", "pencil", "watch", "statue", "remote control"],
    "clean": ["mug", "plate", "bowl", "pan", "spoon", "fork", "ladle", "spatula", "kettle"],
    "heat": ["apple", "potato", "tomato", "egg", "bread", "mug", "cup", "plate"],
    "cool": ["apple", "potato", "tomato", "egg", "lettuce", "wine bottle", "pan", "mug", "cup"],
    "pick-two": ["pencil", "book", "candle", "spoon", "credit card", "cd", "soap bar", "towel"],
}
COLOURS = ["red", "blue", "green", "yellow", "white", "black"]
DISTRACTORS = sorted({name for names in THINGS.values() for name in names})


def scene(task: str, objects: int, seed: int) -> dict[str, Any]:
    """The seeded scene, pure Python: receptacles, the target object(s), the goal receptacle, and where every
    object starts (`places`: object name -> receptacle name)."""
    if task not in TASKS:
        raise ValueError(f"textworld tw-household: task must be one of {list(TASKS)}, got {task!r}")
    if not 0 <= objects <= 10:
        raise ValueError(f"textworld tw-household: objects must be in 0..10, got {objects}")
    rng = random.Random(f"tw-household:{task}:{objects}:{seed}")
    containers, supporters = rng.sample(CONTAINERS, 2), rng.sample(SUPPORTERS, 3)
    receptacles = containers + supporters
    thing = rng.choice(THINGS[task])
    targets = [f"{c} {thing}" for c in rng.sample(COLOURS, 2)] if task == "pick-two" else [thing]
    goal = None if task == "look" else rng.choice(receptacles)
    places = {t: rng.choice([r for r in receptacles if r != goal]) for t in targets}
    pool = [d for d in DISTRACTORS if d != thing and not any(d in t or t in d for t in targets)]
    for name in rng.sample(pool, objects):
        places[name] = rng.choice(receptacles)
    return {"task": task, "containers": containers, "supporters": supporters, "thing": thing, "targets": targets,
            "goal": goal, "places": places}


def objective(world: Mapping[str, Any]) -> str:
    """The goal as ALFWorld words it."""
    task, thing, goal = world["task"], world["thing"], world["goal"]
    where = f"{'in' if goal in world['containers'] else 'on'} the {goal}"
    goals = {"pick": f"put a {thing} {where}", "pick-two": f"put two {_plural(thing)} {where}",
             "clean": f"put a clean {thing} {where}", "heat": f"put a hot {thing} {where}",
             "cool": f"put a cool {thing} {where}", "look": f"look at the {thing} under the desk lamp"}
    return f"Your task is to: {goals[task]}."


def make_household(tw: Any, settings: Mapping[str, Any], seed: int, options: Any) -> Any:
    """Build the `tw-household` game of `seed` for `settings` ({"task", "objects"})."""
    world = scene(str(settings["task"]), int(settings["objects"]), seed)
    kb = household_kb(tw)
    options.kb = kb
    maker = tw.GameMaker(options)
    room = maker.new_room("room")
    appliances = {"sink": maker.new(type="sink", name="sink basin"),
                  "microwave": maker.new(type="microwave", name="microwave"),
                  "fridge": maker.new(type="fridge", name="fridge"), "lamp": maker.new(type="lamp", name="desk lamp")}
    for kind, entity in appliances.items():
        if kind in ("microwave", "fridge"):
            entity.add_property("closed")
        if kind == "lamp":
            entity.add_property("unlit")
        room.add(entity)
    holders = {name: maker.new(type="c", name=name) for name in world["containers"]}
    holders.update({name: maker.new(type="s", name=name) for name in world["supporters"]})
    for name, holder in holders.items():
        if name in world["containers"]:
            holder.add_property("closed")
        room.add(holder)
    for name, where in world["places"].items():
        item = maker.new(type="ho", name=name)
        item.add_property("dirty")
        item.add_property("tepid")
        holders[where].add(item)
    maker.set_player(room)

    entity = {e.name: e for e in maker._entities.values() if e.name}
    goal = world["goal"]
    conditions = {"look": [("in", world["targets"][0], "I"), ("lit", "desk lamp")]}.get(world["task"], [])
    for target in world["targets"]:
        if goal is not None:
            conditions.append(("in" if goal in world["containers"] else "on", target, goal))
        state = {"clean": "cleaned", "heat": "hot", "cool": "cold"}.get(world["task"])
        if state:
            conditions.append((state, target))
    facts = [maker.new_fact(name, *[maker.inventory if a == "I" else entity[a] for a in args])
             for name, *args in conditions]
    actions = replay_plan(maker, plan(world))
    event = tw.generator.Event(actions=actions, conditions=facts)
    maker.quests = [tw.generator.Quest(win_events=[event], desc=objective(world))]

    game = tw.generator.Game(tw.generator.World.from_facts(maker.facts, kb=kb), None, maker.quests)
    for key, info in game.infos.items():
        if key in maker._entities and maker._entities[key].name:
            info.name = maker._entities[key].name
            info.desc = _describe(info.name)
    game.infos[room.id].desc = _room_text(world, {name: e.id for name, e in holders.items()})
    game.objective = objective(world)
    game.metadata["household"] = world
    game.metadata["walkthrough"] = [_command(rule, names) for rule, names in plan(world)]
    return game


def plan(world: Mapping[str, Any]) -> Plan:
    """The winning actions: fetch each target (opening its container), treat it, then place it (opening the goal
    container once) or light the lamp."""
    steps: Plan = []
    opened: set[str] = set()

    def open_(receptacle: str) -> None:
        if receptacle in world["containers"] and receptacle not in opened:
            steps.append(("open/c", (receptacle,)))
            opened.add(receptacle)

    verb = {"clean": ("clean", "sink basin"), "heat": ("heat", "microwave"), "cool": ("cool", "fridge")}
    for target in world["targets"]:
        source = world["places"][target]
        open_(source)
        steps.append(("take/c" if source in world["containers"] else "take/s", (target, source)))
        if world["task"] in verb:
            steps.append((verb[world["task"]][0], (target, verb[world["task"]][1])))
        if world["goal"] is not None:
            open_(world["goal"])
            steps.append(("insert" if world["goal"] in world["containers"] else "put", (target, world["goal"])))
    if world["task"] == "look":
        steps.append(("use/lamp", ("desk lamp",)))
    return steps


def household_kb(tw: Any) -> Any:
    """TextWorld's built-in logic plus data/household.twl (and the built-in text grammars)."""
    import glob
    import os

    data = tw.generator.data
    paths = sorted(glob.glob(os.path.join(data.LOGIC_DATA_PATH, "*.twl"))) + [str(LOGIC)]
    return data.KnowledgeBase(tw.logic.GameLogic.load(paths), data.TEXT_GRAMMARS_PATH)


def _command(rule: str, names: tuple[str, ...]) -> str:
    templates = {"open/c": "open {0}", "take/c": "take {0} from {1}", "take/s": "take {0} from {1}",
                 "insert": "insert {0} into {1}", "put": "put {0} on {1}", "clean": "clean {0} with {1}",
                 "heat": "heat {0} with {1}", "cool": "cool {0} with {1}", "use/lamp": "use {0}"}
    return templates[rule].format(*names)


def _room_text(world: Mapping[str, Any], ids: Mapping[str, str]) -> str:
    """The room as Inform 7 text: what stands there, and (live) what is on each supporter and in each open
    container. Inform does not mention fixed furniture by itself."""
    furniture = world["containers"] + world["supporters"] + ["sink basin", "microwave", "fridge"]  # TextWorld
    # itself says "There is a desk lamp on the floor."
    text = f"You are in the middle of a room. Looking around you, you see {_listing(furniture)}."
    for name in world["containers"]:
        text += (f"[if {ids[name]} is open and there is something in the {ids[name]}] The {name} contains "
                 f"[a list of things in the {ids[name]}].[end if]"
                 f"[if {ids[name]} is open and the {ids[name]} contains nothing] The {name} is empty.[end if]")
    for name in world["supporters"]:
        text += f"[if there is something on the {ids[name]}] On the {name} you see [a list of things on the " \
                f"{ids[name]}].[end if]"
    return text


def _listing(names: list[str]) -> str:
    items = [f"{'an' if n[0] in 'aeiou' else 'a'} {n}" for n in names]
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _describe(name: str) -> str:
    return f"It is {'an' if name[0] in 'aeiou' else 'a'} {name}, nothing out of the ordinary."


def _plural(thing: str) -> str:
    return thing + ("es" if thing.endswith(("s", "sh", "ch", "x")) else "s")
