"""`sheets-student` in SkillProx's update roles (evidence: mechanism): scripted diagnoser, momentum agent, patcher
and shrinker replies in their strict formats, and how the student's solver follows the skill they write.

The prompts are recognised by the opening line of each template (`methods/skillprox/prompts/*.md`); the skill is
read back from the `=== path ===` blocks those prompts render. Everything here is a deterministic stand-in for a
language model, built so that a SkillProx run on `sheets` exercises every mechanism — it is not a finding:

- **Diagnoser:** a failed sequential-scan trajectory gets a shallow diagnosis ("the flags go wrong after the first
  flagged row"); other trajectories get a "keep" note.
- **Momentum:** keeps one scan pattern with a persistence count; it adds the sharper pattern (the comparison value
  is stale) once the count reaches `SHARPEN_AFTER`, or at once when the prompt says the previous candidate was
  rejected (closed-loop diagnosis).
- **Patcher:** without the sharper pattern or a rejection it writes the WRONG scan rule (flag every row that passes
  the reference: the threshold ignored), which the student follows and which lowers the batch's cell accuracy;
  with it, the GOOD rule ("update the reference" — the student's lesson) plus a worked-example reference file, a
  redundant `## Checks` section and an over-general `## Running values` section that breaks the restarting
  running totals (a family the scan batches never contain, so only a validation audit can see it). So the open
  loop (G1) commits the harmful patch and retries, the closed loop rejects it and feeds the reason back (G3), and
  without that feedback (G2) it takes the momentum count to get there.
- **Shrinker:** deletes a target holding a misleading rule; otherwise merges the target's first sentence into the most
  overlapping unit (an L3 target into the section that points to it): legal, strictly shorter and lossy, since
  only the first sentence survives (what a loosened tolerance lets through in the tau sweep).
- **Solver** (`follow_skill`): with the wrong scan rule in its context the student drops the threshold; with the
  over-general running-values rule it never restarts a running total. Otherwise it is the plain student.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from evoarena.benchmarks.sheets.families import match_instruction
from evoarena.methods.skillprox.patch import changed_files
from evoarena.methods.skillprox.prox import overlaps
from evoarena.methods.skillprox.skill import ablate, pointers, read_rendered, sections, unit_texts, units

DIAGNOSE = "You are the SkillProx diagnoser"
MOMENTUM = "You are the SkillProx momentum agent"
PATCH = "You are the SkillProx patcher"
SHRINK = "You are the SkillProx shrinker"

SCAN = "Sequential scans"
GOOD_SCAN = ("Going down the rows, compare each value with the reference value. Each time a row is flagged, update "
             "the reference to that row's value before checking the next row.")
WRONG_SCAN = ("Flag a row as soon as its value passes the reference value; the percentage in the request is only a "
              "rough guide.")
WRONG_MARK = "only a rough guide"
RUNNING = "Running values"
RUNNING_TEXT = "Carry a running value down the whole column and never reset it partway; running totals included."
RUNNING_MARK = "never reset it partway"
CHECKS = "Checks"
CHECKS_TEXT = "Before saving, re-read the instruction and check every target cell of the target range."
EXAMPLE_PATH = "references/sequential-scan.md"
EXAMPLE_POINTER = f"- [Worked example]({EXAMPLE_PATH}): read when rows are flagged against a moving reference."
EXAMPLE = (
    "# Worked example: a moving reference\n\n"
    "Example: 10% above, values 100, 112, 118, 125 flag 112 and 125.\n\n"
    "100 starts as the reference and its row stays empty. 112 is at least 10% above 100, so it is flagged and 112 "
    "becomes the reference. 118 is less than 10% above 112, so it is not flagged. 125 is at least 123.2, so it is "
    "flagged.\n"
)
MISLEADING = (WRONG_MARK, RUNNING_MARK)

SHALLOW = "Sequential scans: the flags go wrong after the first flagged row"
SHARP = "Sequential scans: the comparison value goes stale; it must move to the value of each flagged row."
SHARPEN_AFTER = 3
"""Momentum calls that see the scan failure before the sharper pattern is added without rejection feedback."""
REJECTED = "was REJECTED and rolled back"

# Program edits (checked against the rendered reference programs in tests/benchmarks/sheets/test_skill_policy.py).
SCAN_UPDATE = "        if hit:\n            reference = value  # update the reference\n"
SCAN_HIT = "        hit = value >= reference * (1 + pct) if above else value <= reference * (1 - pct)\n"
SCAN_ANY = "        hit = value > reference if above else value < reference\n"
RESET_ON = "'reset': '1'"
RESET_OFF = "'reset': '0'"


# --- the solver --------------------------------------------------------------------------------------------------


def follow_skill(family: str, program: str, context: str) -> str:
    """The student's program after the harmful rules a SkillProx skill may state (unchanged without them)."""
    if family == "seq_scan" and WRONG_MARK in context:
        return program.replace(SCAN_UPDATE, "").replace(SCAN_HIT, SCAN_ANY)
    if family == "running_total" and RUNNING_MARK in context:
        return program.replace(RESET_ON, RESET_OFF)
    return program


# --- reading the prompts -----------------------------------------------------------------------------------------


def _between(text: str, start: str, end: str) -> str:
    at = text.find(start)
    if at < 0:
        return ""
    rest = text[at + len(start) :]
    stop = rest.find(end)
    return rest if stop < 0 else rest[:stop]


def read_skill(prompt: str, end: str) -> dict[str, str]:
    """The skill files rendered between `# Current skill` and the heading `end` (the `render` format)."""

    return read_rendered(_between(prompt, "# Current skill\n", f"\n{end}"))


def _family(block: str) -> str | None:
    m = re.search(r"^### Instruction\n(.*?)(?=\n### |\Z)", block, flags=re.M | re.S)
    found = match_instruction(m.group(1).strip()) if m else None
    return None if found is None else found[0].name


def _failed_scans(prompt: str) -> int:
    """Failed sequential-scan diagnoses listed in a momentum or patch prompt."""
    return len(re.findall(rf"^- \S+ \(failed[^)]*\): {re.escape(SHALLOW)}", prompt, flags=re.M))


# --- the roles ---------------------------------------------------------------------------------------------------


def diagnose(prompt: str) -> str:
    block = _between(prompt, "# The trajectory to diagnose:", "\n## Agent output")
    failed = block.startswith(" FAILED")
    family = _family(block) or "this kind of"
    if failed and family == "seq_scan":
        out = {"diagnosis": f"{SHALLOW} (the grader lists wrong flag cells).",
               "skill_change": "Add a rule for sequential scans that says how each row is compared."}
    elif failed:
        out = {"diagnosis": f"The {family} task has wrong target cells.",
               "skill_change": f"Add a check for {family} tasks."}
    else:
        out = {"diagnosis": f"The {family} task passed: the program followed the instruction.",
               "skill_change": f"Keep the procedure for {family} tasks."}
    return json.dumps(out)


def momentum(prompt: str) -> str:
    record = _between(prompt, "# Persistent pattern record\n", "\n# This iteration's per-task diagnoses")
    patterns = [m.group(1).strip() for m in re.finditer(r"^\d+\. (.+)$", record, flags=re.M)]
    seen = 0
    for p in patterns:
        m = re.match(rf"{re.escape(SHALLOW)} \(seen (\d+) times?\)\.$", p)
        if m:
            seen = int(m.group(1))
    kept = [p for p in patterns if not p.startswith(SHALLOW)]
    if _failed_scans(prompt):
        seen += 1
    if seen:
        kept.insert(0, f"{SHALLOW} (seen {seen} time{'s' if seen > 1 else ''}).")
    if seen and SHARP not in kept and (seen >= SHARPEN_AFTER or REJECTED in prompt):
        kept.append(SHARP)
    overlay = ("Make the scan's comparison value follow the flagged rows." if SHARP in kept
               else "Fix how sequential scans decide which rows to flag.")
    return json.dumps({"patterns": kept, "overlay": overlay})


def set_section(main: str, title: str, body: str) -> str:
    """`main` with the `## title` section's body replaced (or the section appended)."""
    lines = main.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == f"## {title}"), None)
    section = [f"## {title}\n", *(f"{line}\n" for line in body.split("\n"))]
    if start is None:
        return main.rstrip() + "\n\n" + "".join(section)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = ["\n"] if end < len(lines) else []
    return "".join(lines[:start] + section + tail + lines[end:])


def patch(prompt: str) -> str:
    skill = read_skill(prompt, "# Per-task diagnoses")
    main = skill.get("SKILL.md", "")
    if not main or not _failed_scans(prompt):
        return json.dumps({"files": {}, "summary": "nothing this patcher knows how to fix"})
    sharp = SHARP in _between(prompt, "# Momentum: persistent failure patterns", "# Momentum: this iteration")
    if sharp or REJECTED in prompt:
        main = set_section(main, SCAN, f"{GOOD_SCAN}\n{EXAMPLE_POINTER}")
        main = set_section(main, RUNNING, RUNNING_TEXT)
        main = set_section(main, CHECKS, CHECKS_TEXT)
        files = {"SKILL.md": main, EXAMPLE_PATH: EXAMPLE}
        summary = ("Sequential scans: update the reference at each flagged row (with a worked example); carry "
                   "running values down the column; check the target cells")
    else:
        files = {"SKILL.md": set_section(main, SCAN, WRONG_SCAN)}
        summary = "Sequential scans: flag a row as soon as it passes the reference"
    return json.dumps({"files": files, "summary": summary})


def _gist(text: str) -> str:
    """The first sentence of a unit's body (not a heading, not a pointer): what a merge keeps of it."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and "](references/" not in s:
            head, dot, _ = s.partition(". ")
            return head + "." if dot else s
    return ""


def _merge_into(skill: Mapping[str, str], receiver: str, line: str) -> dict[str, str]:
    """`skill` with `line` appended to one unit: an L2 section, an L3 file, or the preamble."""

    out = dict(skill)
    if receiver.startswith("L3:"):
        out[receiver[3:]] = out[receiver[3:]].rstrip() + f"\n{line}\n"
        return out
    lines = out["SKILL.md"].splitlines(keepends=True)
    secs = sections(out["SKILL.md"])
    if receiver.startswith("L2:"):
        sec = next(s for s in secs if s.uid == receiver)
        at = sec.end
    else:
        at = secs[0].start if secs else len(lines)
    while at > 0 and not lines[at - 1].strip():  # before the blank lines that end the unit
        at -= 1
    lines.insert(at, f"{line}\n")
    out["SKILL.md"] = "".join(lines)
    return out


def shrink(prompt: str) -> str:

    skill = read_skill(prompt, "# Target unit")
    m = re.search(r"^# Target unit (.+?) \(an L[23] ", prompt, flags=re.M)
    present = {u.uid: u for u in units(skill)} if "SKILL.md" in skill else {}
    if m is None or m.group(1) not in present:
        return json.dumps({"action": "delete", "receiver": "", "files": {}, "summary": "target not found"})
    target = present[m.group(1)]
    removed = ablate(skill, target.uid)
    after = {**removed, "SKILL.md": removed["SKILL.md"].rstrip() + "\n"}  # the patch format strips the end
    action, receiver, summary = "delete", "", f"delete {target.uid}: it states a misleading rule"
    if not any(mark in target.text for mark in MISLEADING):
        before, now = unit_texts(removed), unit_texts(after)
        stripped = [u for u in before if now.get(u) != before[u]]  # the unit that became last lost a blank line
        if stripped:
            receiver = stripped[0]
        elif target.kind == "L3":
            holder = next((p.section for p in pointers(skill["SKILL.md"]) if p.target == target.name), None)
            receiver = f"L2:{holder}" if holder else "preamble"
        else:
            ranked = [o["uid"] for o in overlaps(target, list(present.values())) if o["uid"] in now]
            receiver = ranked[0] if ranked else "preamble"
        action, summary = "merge", f"merge {target.uid} into {receiver}"
        line = _gist(target.text)
        if line and line not in "".join(after.values()):
            after = _merge_into(after, receiver, line)
    return json.dumps({"action": action, "receiver": receiver, "files": changed_files(skill, after),
                       "summary": summary})


def skillprox_reply(text: str) -> str | None:
    """The reply to a SkillProx update prompt, or None when `text` is not one (the student answers it)."""
    for mark, role in ((DIAGNOSE, diagnose), (MOMENTUM, momentum), (PATCH, patch), (SHRINK, shrink)):
        if mark in text:
            return role(text)
    return None
