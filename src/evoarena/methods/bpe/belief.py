"""BPE's Belief B_t: a rule-based action–observation parser (no model call, as the paper's ALFWorld adapter) that keeps
what the episode's text says is true — the room, the receptacles and which are open or closed, where each object is
(a receptacle, in hand, on the floor), what is held, and object states (clean / hot / cool, a lamp on). It reads
evoarena's `tw-household` text and ALFWorld's phrasing ("You arrive at…", "You pick up…", "In it, you see…").

It also keeps what the pollution measure needs: where each object was first seen in the episode and which
receptacles' contents were seen (`first_seen`, `seen_in`, `looked`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

HAND, FLOOR = "hand", "floor"
ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.I)
ALFWORLD_NUMBER = re.compile(r"\s+\d+$")
_LIST_SPLIT = re.compile(r",\s*and\s+|,\s*|\s+and\s+")
_ROOM = re.compile(r"-=\s*(.+?)\s*=-")
_AROUND = re.compile(r"Looking (quickly )?around you, you see (.+?)\.(?:\s|$)", re.S)
_ON = re.compile(r"On the ([^,.]+?),? you see (.+?)\.(?:\s|$)", re.S)
_CONTAINS = re.compile(r"The ([^.]+?) contains (.+?)\.(?:\s|$)", re.S)
_EMPTY = re.compile(r"The ([^.]+?) is empty\.")
_IN_ARE = re.compile(r"In the ([^,.]+?),? (?:are|is|you see) (.+?)\.(?:\s|$)", re.S)
_OPEN_REVEAL = re.compile(r"You open the ([^,.]+?), revealing (.+?)\.(?:\s|$)", re.S)
_OPEN = re.compile(r"You open the ([^,.]+?)\.")
_IS_OPEN = re.compile(r"The ([^.]+?) is open\.(?: In it, you see (.+?)\.)?", re.S)
_CLOSE = re.compile(r"You close the ([^,.]+?)\.")
_IS_CLOSED = re.compile(r"The ([^.]+?) is closed\.")
_TAKE = re.compile(r"You (?:take|pick up) the (.+?) from the ([^,.]+?)\.")
_TAKEN = re.compile(r"You (?:take|pick up) the ([^,.]+?)\.")
_PUT = re.compile(r"You put the (.+?) (?:on|into|in|in/on) the ([^,.]+?)\.")
_DROP = re.compile(r"You drop the ([^,.]+?)(?: on the ground)?\.")
_FLOOR = re.compile(r"There (?:is|are) (.+?) on the floor\.")
_TREAT = re.compile(r"You (clean|heat|cool) the (.+?) using the ([^,.]+?)\.")
_ON_LAMP = re.compile(r"(?:You turn on the ([^,.]+?)\.|The ([^.]+?) is already on\.)")
_CARRY = re.compile(r"You are carrying:? (.+?)\.(?:\s|$)", re.S)
_NOT_CARRY = re.compile(r"You are (?:carrying nothing|not carrying anything)")
_ARRIVE = re.compile(r"You arrive at (?:loc \d+|the ([^,.]+?)|([^,.]+?))\.")
STATE_OF = {"clean": "clean", "heat": "hot", "cool": "cool"}


def name(text: str) -> str:
    """An object or receptacle name as the belief keys it: lower case, no article, single spaces."""
    return ARTICLE.sub("", " ".join(text.strip().lower().split()))


def items(text: str) -> list[str]:
    """The names of a listing ("a fork, an egg and a mug"; ALFWorld's "a apple 1, and a bread 1"); [] for nothing."""
    text = text.strip()
    if not text or text.lower() in ("nothing", "nothing."):
        return []
    return [name(part) for part in _LIST_SPLIT.split(text) if name(part) and name(part) != "nothing"]


def same_thing(prior: str, seen: str) -> bool:
    """Whether a seen object is the thing a prior names: equal without ALFWorld's instance number, or the seen name
    ends with it (a "red soap bar" is a "soap bar")."""
    p, s = ALFWORLD_NUMBER.sub("", name(prior)), ALFWORLD_NUMBER.sub("", name(seen))
    return bool(p) and (p == s or s.endswith(" " + p))


@dataclass
class Belief:
    """What the episode's text established so far (see the module doc)."""

    room: str | None = None
    at: str | None = None  # ALFWorld: the receptacle the agent stands at
    receptacles: list[str] = field(default_factory=list)
    opened: dict[str, bool] = field(default_factory=dict)  # receptacle -> open (True) / closed (False)
    where: dict[str, str] = field(default_factory=dict)  # object -> receptacle | HAND | FLOOR
    states: dict[str, list[str]] = field(default_factory=dict)  # object -> ["clean", "hot", "cool", "on"]
    first_seen: dict[str, str] = field(default_factory=dict)  # object -> where it was first seen this episode
    seen_in: dict[str, list[str]] = field(default_factory=dict)  # receptacle -> objects ever seen in / on it
    looked: list[str] = field(default_factory=list)  # receptacles whose contents were seen (empty included)
    updates: int = 0

    # -- reading -------------------------------------------------------------------------------------------------
    def observe(self, action: str | None, text: str) -> None:
        """Update from one step: the action sent (None for the episode's first text) and what came back."""
        self.updates += 1
        text = text or ""
        if (room := _ROOM.search(text)) is not None and "welcome" not in room.group(1).lower():  # not a banner
            self.room = room.group(1).strip()
        if (arrive := _ARRIVE.search(text)) is not None:
            self.at = name(arrive.group(1) or arrive.group(2) or "") or self.at
        if (around := _AROUND.search(text)) is not None:
            self._receptacles(items(around.group(2)))
        listed: dict[str, list[str]] = {}
        for pattern in (_ON, _CONTAINS, _IN_ARE, _OPEN_REVEAL):
            for m in pattern.finditer(text):
                listed.setdefault(name(m.group(1)), []).extend(items(m.group(2)))
        for m in _IS_OPEN.finditer(text):
            self.opened[name(m.group(1))] = True
            if m.group(2) is not None:
                listed.setdefault(name(m.group(1)), []).extend(items(m.group(2)))
        for m in _EMPTY.finditer(text):
            listed.setdefault(name(m.group(1)), [])
            self.opened.setdefault(name(m.group(1)), True)
        for pattern in (_CONTAINS, _OPEN_REVEAL, _OPEN):
            for m in pattern.finditer(text):
                self.opened[name(m.group(1))] = True
        for pattern in (_CLOSE, _IS_CLOSED):
            for m in pattern.finditer(text):
                self.opened[name(m.group(1))] = False
        if around is not None and not around.group(1):  # a full room description (tw-household): a snapshot
            self._forget_unlisted(listed)
        for receptacle, objects in listed.items():
            self._contents(receptacle, objects)
        self._moves(text)
        for m in _TREAT.finditer(text):
            self._state(name(m.group(2)), STATE_OF[m.group(1)])
        for m in _ON_LAMP.finditer(text):
            self._state(name(m.group(1) or m.group(2)), "on")
        self._inventory(text)

    def _receptacles(self, names: Iterable[str]) -> None:
        for n in names:
            if n not in self.receptacles:
                self.receptacles.append(n)

    def _forget_unlisted(self, listed: Mapping[str, Sequence[str]]) -> None:
        """A room description lists the contents of supporters and open containers: an object believed on or in a
        receptacle that is not closed and not listed now has gone from there."""
        for obj, place in list(self.where.items()):
            if place not in (HAND, FLOOR) and place not in listed and self.opened.get(place) is not False:
                del self.where[obj]

    def _contents(self, receptacle: str, objects: Sequence[str]) -> None:
        self._receptacles([receptacle])
        if receptacle not in self.looked:
            self.looked.append(receptacle)
        seen = self.seen_in.setdefault(receptacle, [])
        for obj in objects:
            self._place(obj, receptacle)
            if obj not in seen:
                seen.append(obj)

    def _place(self, obj: str, place: str) -> None:
        self.where[obj] = place
        self.first_seen.setdefault(obj, place)

    def _moves(self, text: str) -> None:
        for m in _TAKE.finditer(text):
            self.first_seen.setdefault(name(m.group(1)), name(m.group(2)))
            self.where[name(m.group(1))] = HAND
        if not _TAKE.search(text):
            for m in _TAKEN.finditer(text):
                self.where[name(m.group(1))] = HAND
        for m in _PUT.finditer(text):
            self.where[name(m.group(1))] = name(m.group(2))
        for m in _DROP.finditer(text):
            self.where[name(m.group(1))] = FLOOR
        for m in _FLOOR.finditer(text):
            for obj in items(m.group(1)):
                self._place(obj, FLOOR)

    def _state(self, obj: str, state: str) -> None:
        states = self.states.setdefault(obj, [])
        if state not in states:
            states.append(state)

    def _inventory(self, text: str) -> None:
        carried = _CARRY.search(text)
        if carried is None and not _NOT_CARRY.search(text):
            return
        held = set(items(carried.group(1))) if carried is not None else set()
        for obj, place in list(self.where.items()):
            if place == HAND and obj not in held:
                del self.where[obj]
        for obj in held:
            self.where[obj] = HAND

    # -- what track[...] shows -----------------------------------------------------------------------------------
    @property
    def held(self) -> list[str]:
        return [o for o, p in self.where.items() if p == HAND]

    def describe(self, obj: str) -> str:
        """One object's (or receptacle's) belief, or what is not known."""
        key = name(obj)
        if key in self.receptacles or key in self.opened:
            parts = [f"{key}: a receptacle"]
            if key in self.opened:
                parts.append("open" if self.opened[key] else "closed")
            inside = [o for o, p in self.where.items() if p == key]
            if inside:
                parts.append("holds " + ", ".join(inside))
            elif key in self.looked:
                parts.append("seen empty")
            return "; ".join(parts) + "."
        matches = [o for o in {**self.where, **self.states} if o == key or same_thing(key, o)]
        if not matches:
            return f"Nothing is known about {key!r} yet."
        return " ".join(self._object(o) for o in matches)

    def _object(self, obj: str) -> str:
        place = self.where.get(obj)
        where = {HAND: "in your hands", FLOOR: "on the floor", None: "location unknown"}.get(place, f"at the {place}")
        states = self.states.get(obj, [])
        return f"{obj}: {where}" + (f" ({', '.join(states)})" if states else "") + "."

    def world(self) -> str:
        """The whole belief in a few lines."""
        lines = []
        if self.room or self.at:
            lines.append("Location: " + ", ".join(x for x in (self.room, f"at {self.at}" if self.at else None) if x))
        lines.append("Holding: " + (", ".join(self.held) or "nothing"))
        if self.opened:
            lines.append("Open: " + (", ".join(r for r, o in self.opened.items() if o) or "none") +
                         "; closed: " + (", ".join(r for r, o in self.opened.items() if not o) or "none"))
        placed: dict[str, list[str]] = {}
        for obj, place in self.where.items():
            if place != HAND:
                placed.setdefault(place, []).append(obj)
        if placed:
            lines.append("Objects: " + "; ".join(f"{p}: {', '.join(objs)}" for p, objs in placed.items()))
        unopened = [r for r in self.receptacles if r not in self.looked and r not in placed]
        if unopened:
            lines.append("Not looked into yet: " + ", ".join(unopened))
        treated = [f"{o} ({', '.join(s)})" for o, s in self.states.items() if s]
        if treated:
            lines.append("States: " + ", ".join(treated))
        return "\n".join(lines)

    def facts(self) -> dict[str, Any]:
        """The pollution measure's view: first sightings and looked-into receptacles with what was seen there."""
        return {"first_seen": dict(self.first_seen), "seen_in": {r: list(o) for r, o in self.seen_in.items()},
                "looked": list(self.looked)}


def replay(start: str, steps: Iterable[tuple[str, str, str]]) -> Belief:
    """The belief after an episode: its first text, then each (kind, action, observation) of kind "env"."""
    belief = Belief()
    if start:
        belief.observe(None, start)
    for kind, action, observation in steps:
        if kind == "env":
            belief.observe(action, observation)
    return belief
