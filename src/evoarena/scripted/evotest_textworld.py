"""EvoTest's evolver on TextWorld games, scripted (evidence: mechanism; evotest/prompts/evolve.md). It reads the game
history it is shown and writes a new guiding prompt: the interactions the history shows but the agent never tried
(an object seen on or in something: `take <object> from <thing>`) as `Try first: …`, the failure loops' tails to stop
repeating, then to explore what was only lightly searched; a state extractor that names the rooms reached and the
objects taken (strings of the game's own text); and — when the prompt asks for them (scope `paper`) — a memory of the
same lessons and temperature 0. A history that shows no untried interaction gives a guide that only breaks the loops.
The solver (`jitrl-textworld`) ranks the `Try first` actions it can take first."""

from __future__ import annotations

import re

HISTORY_START, HISTORY_END = "--- GAME HISTORY START ---", "--- GAME HISTORY END ---"
TRY_FIRST = "Try first: "
EXTRACTOR = ("def extract_state(game_history):\n"
             "    rooms = []\n"
             "    for line in game_history.splitlines():\n"
             "        if line.startswith(\"-= \") and line.endswith(\" =-\") and line[3:-3] not in rooms:\n"
             "            rooms.append(line[3:-3])\n"
             "    taken = game_history.count(\"You take \")\n"
             "    return \"Rooms reached: \" + \", \".join(rooms) + \"; objects taken: \" + str(taken) + \".\"\n")
_HELD = re.compile(r"(?:On|In) the ([a-z ]+?) (?:you can see|is|are) (?:an? |some )?([a-z ]+?)[.,]")
_TAIL = re.compile(r"Actions to avoid \(tail\): (.*)")


def is_evolve_prompt(text: str) -> bool:
    return HISTORY_START in text


def untried(history: str) -> list[str]:
    """`take <object> from <thing>` for each object the history shows on or in something, never tried, in order."""
    tried = set(re.findall(r"^> (.+)$", history, re.M))
    found = [f"take {obj} from {where}" for where, obj in _HELD.findall(history)]
    return [a for a in dict.fromkeys(found) if a not in tried]


def evolve(prompt: str) -> str:
    history = prompt.split(HISTORY_START, 1)[-1].split(HISTORY_END, 1)[0]
    todo = untried(history)
    tails = list(dict.fromkeys(a.strip() for t in _TAIL.findall(prompt) for a in t.split(",") if a.strip()))
    lines = ["Read the objective at the start and work towards it, one command at a time."]
    if todo:
        lines.append(f"{TRY_FIRST}{'; '.join(todo)}.")
    if tails:
        lines.append(f"Earlier episodes went round in a loop ({', '.join(tails)}): do not repeat it.")
    lines.append("Then explore the rooms and objects searched least so far (only a guess: check what the game says).")
    reply = "\n".join(lines) + "\n"
    if "<memory>" in prompt:
        lesson = f"Untried so far: {'; '.join(todo)}." if todo else "Nothing untried was seen: explore new rooms."
        reply += f"<memory>\n{lesson}\nLooping over the same rooms scored nothing.\n</memory>\n"
        reply += "<temperature>0</temperature>\n"
    return reply + f"<code>\n{EXTRACTOR}</code>\n"


def first_tries(text: str) -> list[str]:
    """The actions a guide asks to try first (`Try first: a; b.`), in its order."""
    found = re.search(rf"{TRY_FIRST}(.+?)\.$", text, re.M)
    return [a.strip() for a in found.group(1).split(";")] if found else []
