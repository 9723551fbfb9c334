"""`bpe-household`: BPE's roles on the `tw-household` games, scripted (evidence: mechanism).

As the solver it reads only its prompt: the harness state block (what was recalled, tracked, committed), the help of
the meta-actions it is offered, the goal and the admissible commands. It spends its first steps on the harness —
`recall[<task> <thing>]`, `commit[find the <thing>: todo]`, `track[world]` — as far as each is offered, then plays the
household task from the admissible commands: treat the thing held (clean / heat / cool), put it in or on the goal
(opening a closed goal first), take a thing it sees, otherwise open a closed receptacle — first where a recalled
search prior says the thing is. Once it holds the thing it notes where it took it from and commits the subgoal as
tried. A rule follower, not a player.

As the consolidator it adds a search prior for each episode's thing where it was first seen (unless the bank has one
for it), moves a contradicted prior to where the object was seen (or removes it), and keeps the notes (general when
the episode was won, mistakes when not); NONE when there is nothing to do."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evoarena.api import policy
from evoarena.methods.bpe.goal import goal
from evoarena.models.base import GenParams, Message

CONSOLIDATOR = "experience bank has four stores"
APPLIANCES = ("fridge", "microwave")
TREAT = {"clean": "clean", "heat": "heat", "cool": "cool"}
_ACTIONS = re.compile(r"^Actions you can take: (.+)$", re.M)
_TAKEN = re.compile(r"^> take (.+?) from (.+)$", re.M)
_PRIOR = re.compile(r"\] \(search priors\) The (.+?) (?:is|was found) in/on the (.+?)\.", re.I)


def _offered(text: str, name: str) -> bool:
    return f"\n- {name}[" in text


def _matches(thing: str, obj: str) -> bool:
    return obj == thing or obj.endswith(" " + thing)


def solver(text: str) -> str:
    state = text.split("\nHarness actions (", 1)[0] if "Harness state:" in text else ""  # H_t, not the history
    task = goal(text)
    thing, kind, place = task.thing or "", task.kind or "", task.place or ""
    actions = [a.strip() for a in m.group(1).split(", ")] if (m := _ACTIONS.search(text)) else []
    if _offered(text, "recall") and "Experience: nothing recalled yet" in state:
        return f"recall[{kind} {thing}]".replace("[ ", "[")
    if _offered(text, "commit") and "no subgoal committed yet" in state:
        return f"commit[find the {thing}: todo]"
    if _offered(text, "track") and "Belief: not shown until you track" in state:
        return "track[world]"
    held = [a.removeprefix("drop ") for a in actions if a.startswith("drop ") and _matches(thing, a[5:])]
    if held:
        if _offered(text, "note") and "Notes this episode" not in state:
            taken = [(o, r) for o, r in _TAKEN.findall(text) if o == held[0]]
            if taken:
                return f"note[the {thing} was in the {taken[-1][1]}]"
        if _offered(text, "commit") and f"find the {thing} — todo" in state:
            return f"commit[find the {thing}: tried]"
        obj = held[0]
        treat = f"{TREAT[kind]} {obj} with " if kind in TREAT else None
        if treat and (found := next((a for a in actions if a.startswith(treat)), None)):
            return found
        if kind == "look":
            return "use desk lamp" if "use desk lamp" in actions else "look"
        for verb in (f"put {obj} on {place}", f"insert {obj} into {place}"):
            if verb in actions:
                return verb
        if f"open {place}" in actions:
            return f"open {place}"
    takes = [a for a in actions if a.startswith("take ") and " from " in a]
    for a in takes:
        obj, source = a[5:].split(" from ", 1)
        if _matches(thing, obj) and source != place:
            return a
    opens = [a for a in actions if a.startswith("open ") and a[5:] not in APPLIANCES and a[5:] != place]
    priors = [r for o, r in _PRIOR.findall(state) if _matches(o.lower(), thing) or _matches(thing, o.lower())]
    for r in priors:
        if f"open {r}" in opens:
            return f"open {r}"
    if opens:
        return opens[0]
    return "look"


def consolidator(text: str) -> str:
    lines: list[str] = []
    known = {m.group(1).lower() for m in re.finditer(r"\] \(search priors, used \d+\) The (.+?) (?:is|was)", text)}
    for block in text.split("\nEpisode ")[1:]:
        won = "Outcome: won" in block
        if (m := re.search(r"^The (.+?) was first seen: in/on the (.+)$", block, re.M)) and m.group(1) not in known:
            lines.append(f"ADD search: The {m.group(1)} is in/on the {m.group(2)}.")
            known.add(m.group(1))
        for c in re.finditer(r"^\[(s\d+)\] said the (.+?) is in/on the .+?, but (.+)\.$", block, re.M):
            seen = re.match(r"it was first seen in/on the (.+)", c.group(3))
            lines.append(f"UPDATE {c.group(1)}: The {c.group(2)} is in/on the {seen.group(1)}." if seen
                         else f"REMOVE {c.group(1)}")
        if (n := re.search(r"^The agent's notes: (.+)$", block, re.M)) is not None:
            for note in n.group(1).split(" | "):
                lines.append(f"ADD {'general' if won else 'mistakes'}: {note}")
    return "\n".join(dict.fromkeys(lines)) or "NONE"


@policy("bpe-household")
def bpe_household(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if CONSOLIDATOR in text:
        return consolidator(text)
    return solver(text)
