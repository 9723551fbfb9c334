"""`tw-keydoor`: evoarena's TextWorld family for transfer tests — the issue's "key-moved / door-rule variants".

TextWorld's own generators cannot hold a quest fixed while changing one fact of the world (a new seed changes the
map, the objects and the quest together), so this family builds its games with TextWorld's `GameMaker`: a seeded
random tree of `rooms` rooms on a grid, the last of them (the vault) behind a locked door, two keys of different
metals, three pieces of furniture, and the quest "take the treasure in the vault". The seed picks everything: room
names and layout, the door, the keys, the treasure, the furniture and where it stands. The `variant` setting changes
one fact (or two) on the same map, with the same quest and the same objective text:

- `base`: the first key, in a closed container, opens the door; the second key lies on a supporter as a decoy.
- `key-moved`: the same, but the first key lies in another container in another room (same furniture everywhere).
- `door-rule`: the keys stay where `base` puts them, but the door now matches the *second* key.
- `key-moved-door-rule`: both at once, EvoTest's transfer test as its seed words it (move the key, change a door
  rule): the door now matches the second key, and that key lies in the other container (another room than base's
  key) instead of on the supporter; the first key stays where `base` puts it and no longer fits.

An agent (or an evolved harness) that learned `base` by rote fails the variants until it reads the world again;
one that learned "find the key that fits" transfers. The winning commands are planned here and replayed through
TextWorld's logic (no extra compile), so the game's walkthrough and `policy_commands` are exact."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Mapping
from typing import Any

ROOMS = ["kitchen", "hallway", "study", "pantry", "library", "workshop", "bedroom", "attic", "cellar", "parlour",
         "scullery", "gallery"]
DOORS = ["oak door", "iron gate", "red door", "hatch"]
METALS = ["brass", "iron", "copper", "silver", "bronze"]
TREASURES = ["ruby", "golden idol", "silver chalice", "jade figurine", "pearl necklace"]
CONTAINERS = ["chest", "cabinet", "crate", "trunk"]
SUPPORTERS = ["table", "shelf", "workbench"]
STEPS = {"north": (0, 1), "south": (0, -1), "east": (1, 0), "west": (-1, 0)}
BACK = {"north": "south", "south": "north", "east": "west", "west": "east"}
Plan = list[tuple[str, tuple[str, ...]]]  # (TextWorld rule, names of the entities it acts on)
# variant: (where the first key lies, where the second key lies, which key opens the door: 0 first, 1 second)
PLACES: dict[str, tuple[str, str, int]] = {
    "base": ("container", "supporter", 0),
    "key-moved": ("other", "supporter", 0),
    "door-rule": ("container", "supporter", 1),
    "key-moved-door-rule": ("container", "other", 1),
}
VARIANTS = tuple(PLACES)


def layout(rooms: int, seed: int) -> dict[str, Any]:
    """The seeded world, independent of the variant: room names, tree edges with directions (room 0 is the start,
    the last room the vault), furniture and key placement for each variant. Pure Python, so tests can read it."""
    if not 3 <= rooms <= len(ROOMS):
        raise ValueError(f"textworld tw-keydoor: rooms must be in 3..{len(ROOMS)}, got {rooms}")
    rng = random.Random(f"tw-keydoor:{rooms}:{seed}")
    names = rng.sample(ROOMS, rooms)
    where: dict[tuple[int, int], int] = {(0, 0): 0}
    pos = [(0, 0)]
    edges: list[tuple[int, str, int]] = []  # (room, direction, new room)
    for new in range(1, rooms):
        # the vault hangs off any room but the start, so the door is never next to where the player begins
        parents = list(range(new)) if new < rooms - 1 else list(range(1, new))
        options = [(p, d) for p in parents for d, (dx, dy) in STEPS.items()
                   if (pos[p][0] + dx, pos[p][1] + dy) not in where]
        parent, direction = rng.choice(options)
        cell = (pos[parent][0] + STEPS[direction][0], pos[parent][1] + STEPS[direction][1])
        where[cell] = new
        pos.append(cell)
        edges.append((parent, direction, new))
    outside = list(range(rooms - 1))  # every room but the vault
    first, second = rng.sample(METALS, 2)
    spots = {"container": rng.choice(outside), "supporter": rng.choice(outside)}
    spots["other"] = rng.choice([r for r in outside if r != spots["container"]])  # key-moved: another room
    container, other = rng.sample(CONTAINERS, 2)
    return {"names": names, "edges": edges, "door": rng.choice(DOORS), "keys": (f"{first} key", f"{second} key"),
            "treasure": rng.choice(TREASURES), "container": container, "other": other,
            "supporter": rng.choice(SUPPORTERS), "spots": spots}


def make_keydoor(tw: Any, settings: Mapping[str, Any], seed: int, options: Any) -> Any:
    """Build the `tw-keydoor` game of `seed` for `settings` ({"rooms", "variant"}); `options` carries TextWorld's
    seeds (the text grammar's among them) and knowledge base."""
    variant = settings["variant"]
    world = layout(int(settings["rooms"]), seed)
    # the built-in knowledge base, parsed once per process (a fresh GameOptions parses it again, ~0.5 s a game);
    # make_game has checked it is the built-in data, and the game files come out byte for byte the same
    options.kb = tw.generator.KnowledgeBase.default()
    maker = tw.GameMaker(options)
    rooms = [maker.new_room(name) for name in world["names"]]
    vault = len(rooms) - 1
    for parent, direction, new in world["edges"]:
        path = maker.connect(rooms[parent].exits[direction], rooms[new].exits[BACK[direction]])
        if new == vault:
            door = maker.new_door(path, name=world["door"])
            door.add_property("locked")
    keys = [maker.new(type="k", name=name) for name in world["keys"]]
    first_at, second_at, opener = PLACES[variant]
    maker.add_fact("match", keys[opener], door)
    spots = world["spots"]
    holders = {"container": maker.new(type="c", name=world["container"]),
               "other": maker.new(type="c", name=world["other"]),
               "supporter": maker.new(type="s", name=world["supporter"])}
    for kind, holder in holders.items():
        if kind != "supporter":
            holder.add_property("closed")
        rooms[spots[kind]].add(holder)
    holders[first_at].add(keys[0])
    holders[second_at].add(keys[1])
    treasure = maker.new(type="o", name=world["treasure"])
    rooms[vault].add(treasure)
    maker.set_player(rooms[0])

    plan = _plan(world, world["keys"][opener], (first_at, second_at)[opener])
    quest = tw.generator.Quest(win_events=[tw.generator.Event(actions=replay_plan(maker, plan))])
    maker.quests = [quest]
    game = maker.build()
    game.objective = (f"Somewhere in this house a {world['treasure']} lies behind a locked {world['door']}. "
                      f"Find the key that opens it, then take the {world['treasure']}.")
    game.metadata["keydoor"] = {"variant": variant, "layout": world}
    return game


def route(world: Mapping[str, Any], start: int, goal: int) -> list[tuple[str, int]]:
    """The (direction, room) moves from `start` to `goal` along the tree's edges (BFS)."""
    links: dict[int, list[tuple[str, int]]] = {}
    for parent, direction, new in world["edges"]:
        links.setdefault(parent, []).append((direction, new))
        links.setdefault(new, []).append((BACK[direction], parent))
    came: dict[int, tuple[int, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        for direction, nxt in links.get(room, []):
            if nxt not in came:
                came[nxt] = (room, direction)
                queue.append(nxt)
    moves: list[tuple[str, int]] = []
    room = goal
    while (step := came[room]) is not None:
        moves.append((step[1], room))
        room = step[0]
    return moves[::-1]


def _plan(world: Mapping[str, Any], key: str, holder: str) -> Plan:
    """The winning actions as (rule, entity names): walk to the key, take it, walk to the door, unlock, open, enter,
    take the treasure."""
    names = world["names"]
    vault = len(names) - 1
    door_side = next(parent for parent, _, new in world["edges"] if new == vault)
    key_room = world["spots"][holder]
    plan: Plan = [(f"go/{d}", (names[r],)) for d, r in route(world, 0, key_room)]
    if holder == "supporter":
        plan.append(("take/s", (key, world["supporter"])))
    else:
        plan += [("open/c", (world[holder],)), ("take/c", (key, world[holder]))]
    plan += [(f"go/{d}", (names[r],)) for d, r in route(world, key_room, door_side)]
    plan += [("unlock/d", (world["door"], key)), ("open/d", (world["door"],))]
    plan += [(f"go/{d}", (names[r],)) for d, r in route(world, door_side, vault)]
    plan.append(("take", (world["treasure"],)))
    return plan


def replay_plan(maker: Any, plan: Plan) -> list[Any]:
    """Replay `plan` through TextWorld's logic from the maker's initial state: each step is the one applicable action
    of that rule whose arguments include all the named entities (a RuntimeError otherwise). The actions make the
    quest's event, so TextWorld's walkthrough and `policy_commands` follow a plan that is known to win."""
    state = maker.state.copy()
    rules, constants = maker._kb.rules, maker._kb.types.constants_mapping  # binds the player P and inventory I
    variables = {entity.name: entity.var for entity in maker._entities.values() if entity.name}
    actions = []
    for rule, names in plan:
        wanted = {variables[n] for n in names}
        found = [a for a in state.all_applicable_actions([rules[rule]], constants) if wanted <= set(a.variables)]
        if len(found) != 1:
            raise RuntimeError(f"tw-keydoor: {len(found)} actions match {rule} {names}")
        state.apply(found[0])
        actions.append(found[0])
    return actions
