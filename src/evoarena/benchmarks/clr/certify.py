"""Probe certification of CLR slots with the model that will be evaluated (seed 003 §4.2; clr-notes §9, A4, A16).

Each probe runs three rotations: each non-example member in turn is the revealed m0 (feedback: the seed's
sentences for m0 and the practice non-member); the other two are unseen. Known (first): lesson + feedback + pool,
name the grouping and mark the pool. Hidden: label + example (+ the task's value descriptions) only. Learnable:
feedback, no lesson. Solvable: feedback + lesson, scored on the pool minus the revealed values. Replies follow a
strict line format; a broken reply is rejected, never repaired, and a value without a readable judgment counts
as wrong (in Hidden: as marked, so an unreadable reply never passes).
"""

from __future__ import annotations

import copy
import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict

from evoarena.benchmarks.clr.chains import Slot, draw_slot
from evoarena.benchmarks.clr.grading import membership_sentence
from evoarena.benchmarks.clr.library import Library, Roster
from evoarena.benchmarks.prompts import prompt_template
from evoarena.codec import from_plain, to_plain
from evoarena.models import GenParams, Message, RoleModel

PROBES = ("known", "hidden", "learnable", "solvable")
NEUTRAL_TITLE = "UPDATE NOTE"
SYSTEM = "You judge which values belong to a grouping, and reply in exactly the line format you are asked for."
_EPS = 1e-9


def _lesson_sections() -> dict[str, str]:
    text = resources.files("evoarena.benchmarks.clr").joinpath("lesson.md").read_text("utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)  # [preamble, heading, body, heading, body, ...]
    return {parts[i].strip().lower(): parts[i + 1].strip() for i in range(1, len(parts), 2)}


_SECTIONS = _lesson_sections()
ORIGINAL_TITLE: str = _SECTIONS["title"]
CONVENTION: str = _SECTIONS["convention"]
PROCEDURE: str = _SECTIONS["procedure"]


def lesson_text(title: str | None = None, *, convention: bool = True, procedure: bool = True) -> str:
    """The lesson under its (reconstructed) original title, or under `title` (the ablations use "UPDATE NOTE").
    `convention=False` / `procedure=False` give the procedure-only / convention-only ablations."""
    body = [CONVENTION] * convention + [PROCEDURE] * procedure
    return "\n\n".join([ORIGINAL_TITLE if title is None else title, *body])


class CertifyConfig(BaseModel):
    """Thresholds (the seed's, calibrated on GPT-6-Luna: clr-notes A16) and how probes are sampled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    known_min_mean: float = 0.8  # Known: mean soft score over the pool
    known_min_rotation: float = 0.6  # Known: soft score in every rotation
    known_requires_name: bool = True  # Known: the grouping is named in every rotation
    hidden_fails_on_name: bool = True  # Hidden: naming the class (name or alias) fails
    hidden_max_marked: float = 1 / 6  # Hidden: at most this fraction of unseen members marked
    learnable_min_marked: float = 1 / 6  # Learnable: fraction of unseen members marked, inclusive bounds
    learnable_max_marked: float = 2 / 3
    solvable_min_mean: float = 0.8  # Solvable: mean soft score over the pool minus a, m0, n_p
    temperature: float = 0.0
    max_tokens: int = 600
    stop_early: bool = True  # stop a slot's probes at the first failure
    max_replacements: int = 3  # certify_release(replace=True): redraws of a failing slot


@dataclass(frozen=True)
class ParsedReply:
    grouping: str | None  # None: the reply was rejected
    marks: dict[str, bool | None]  # None: no readable judgment for that value
    error: str | None = None


@dataclass(frozen=True)
class RotationResult:
    rotation: int  # index into slot.members of the revealed member
    revealed: str | None  # None in Hidden, where nothing is revealed
    grouping: str | None
    named: bool  # the GROUPING line names the class
    error: str | None  # why the reply was rejected
    unparsed: tuple[str, ...]  # values without a readable judgment
    wrong: tuple[str, ...]  # scored values judged wrongly (unparsed ones included)
    score: float  # soft score over the probe's scored values
    unseen_marked: int  # of the two unseen members


@dataclass(frozen=True)
class ProbeResult:
    probe: str
    passed: bool
    reason: str
    mean_score: float
    min_score: float
    marked_fraction: float  # unseen members marked, over all rotations
    rotations: tuple[RotationResult, ...]


@dataclass(frozen=True)
class SlotCertificate:
    class_id: str
    label: str
    example: str
    probes: tuple[ProbeResult, ...]  # in the order run; fewer than four when stopped early

    @property
    def passed(self) -> bool:
        return len(self.probes) == len(PROBES) and all(p.passed for p in self.probes)

    @property
    def failed_probe(self) -> str | None:
        return next((p.probe for p in self.probes if not p.passed), None)

    def report(self) -> dict[str, Any]:
        """Its plain form with the verdict: whether it passed and the first probe it failed."""
        return {**to_plain(self), "passed": self.passed, "failed_probe": self.failed_probe}


_GROUPING = re.compile(r"GROUPING:[ \t]*(\S.*)", re.IGNORECASE)
_MARK = re.compile(r"(.+):[ \t]*(yes|no)", re.IGNORECASE)  # greedy: values may contain ": " (CWE-79: …)


def parse_reply(text: str, values: Sequence[str]) -> ParsedReply:
    """First non-empty line `GROUPING: <name>`, then only `<listed value>: yes|no` lines (value matched
    case-insensitively). Any other line rejects the reply. A value missing, or answered both ways, is unparsed."""
    blank: dict[str, bool | None] = dict.fromkeys(values, None)
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    head = _GROUPING.fullmatch(lines[0]) if lines else None
    if head is None:
        return ParsedReply(None, blank, "the first line is not 'GROUPING: <name>'")
    by_key = {v.casefold(): v for v in values}
    seen: dict[str, set[bool]] = {}
    for ln in lines[1:]:
        m = _MARK.fullmatch(ln)
        value = by_key.get(m.group(1).strip().casefold()) if m else None
        if m is None or value is None:
            return ParsedReply(None, blank, f"a line is not '<listed value>: yes|no': {ln[:80]!r}")
        seen.setdefault(value, set()).add(m.group(2).lower() == "yes")
    marks: dict[str, bool | None] = {v: next(iter(seen[v])) if len(seen.get(v, ())) == 1 else None for v in values}
    return ParsedReply(head.group(1).strip(), marks)


def _norm(text: str) -> str:
    return " " + " ".join(re.findall(r"[0-9a-z]+", text.casefold())) + " "


def names_class(text: str, roster: Roster) -> bool:
    """Whether `text` names the roster by its name or an alias, as whole words, case-insensitively. Short
    all-capital aliases ("EU", "CAN", "G7") must appear in capitals, or "I can't tell" would name a class."""
    for name in (roster.name, *roster.aliases):
        if len(name) <= 5 and name.isupper():
            if re.search(rf"(?<![0-9A-Za-z]){re.escape(name)}(?![0-9A-Za-z])", text):
                return True
        elif _norm(name).strip() and _norm(name) in _norm(text):
            return True
    return False


def probe_values(slot: Slot) -> list[tuple[str, str]]:
    """The pool (three members, the practice and the test non-members) with descriptions, in a seeded order."""
    out = sorted((v, slot.descriptions[v]) for v in slot.pool())
    random.Random(f"clr-probe:{slot.class_id}:{slot.example}").shuffle(out)
    return out


def render_probe(probe: str, slot: Slot, rotation: int) -> str:
    m0 = slot.members[rotation]
    feedback = [membership_sentence(slot, m0, True), membership_sentence(slot, slot.practice_nonmember, False)]
    # a name outside PROBES is TemplateNotFound
    template = prompt_template("evoarena.benchmarks.clr", f"probe_{probe}.md")
    return template.render(
        lesson=lesson_text(),
        label=slot.label,
        field=slot.field,
        example=slot.example,
        example_description=slot.descriptions[slot.example],
        feedback=feedback,
        values=probe_values(slot),
    )


def run_probe(probe: str, slot: Slot, roster: Roster, model: RoleModel, config: CertifyConfig) -> ProbeResult:
    """One probe over the three rotations; `sample_index` is the rotation, so each is its own ledger call."""
    values = [v for v, _ in probe_values(slot)]
    params = GenParams(temperature=config.temperature, max_tokens=config.max_tokens)
    rotations: list[RotationResult] = []
    for r, m0 in enumerate(slot.members):
        messages = [Message("system", SYSTEM), Message("user", render_probe(probe, slot, r))]
        reply = parse_reply(model.complete(messages, params, sample_index=r).text, values)
        revealed = {m0, slot.practice_nonmember}
        scored = [v for v in values if probe in ("known", "hidden") or v not in revealed]
        wrong = tuple(v for v in scored if reply.marks[v] != (v in roster.members))
        unseen = [m for m in slot.members if m != m0]
        # an unreadable judgment counts as wrong (not marked), but in Hidden against passing (marked)
        marked = sum(reply.marks[m] is not False if probe == "hidden" else reply.marks[m] is True for m in unseen)
        named = reply.grouping is not None and names_class(reply.grouping, roster)
        unparsed = tuple(v for v in values if reply.marks[v] is None)
        shown = None if probe == "hidden" else m0
        score = 1 - len(wrong) / len(scored)
        rotations.append(RotationResult(r, shown, reply.grouping, named, reply.error, unparsed, wrong, score, marked))
    return _judge(probe, tuple(rotations), config)


def _judge(probe: str, rots: tuple[RotationResult, ...], c: CertifyConfig) -> ProbeResult:
    scores = [r.score for r in rots]
    mean, low = sum(scores) / len(scores), min(scores)
    marked = sum(r.unseen_marked for r in rots) / (2 * len(rots))
    named = sum(r.named for r in rots)
    fails: list[str] = []
    if probe == "known":
        if mean < c.known_min_mean - _EPS:
            fails.append(f"mean soft score {mean:.3f} < {c.known_min_mean:.3f}")
        if low < c.known_min_rotation - _EPS:
            fails.append(f"a rotation's soft score {low:.3f} < {c.known_min_rotation:.3f}")
        if c.known_requires_name and named < len(rots):
            fails.append(f"named the grouping in {named} of {len(rots)} rotations")
    elif probe == "hidden":
        if c.hidden_fails_on_name and named:
            fails.append(f"named the class from the example alone in {named} of {len(rots)} rotations")
        if marked > c.hidden_max_marked + _EPS:
            fails.append(f"marked {marked:.3f} of unseen members > {c.hidden_max_marked:.3f}")
    elif probe == "learnable":
        if not c.learnable_min_marked - _EPS <= marked <= c.learnable_max_marked + _EPS:
            bounds = f"[{c.learnable_min_marked:.3f}, {c.learnable_max_marked:.3f}]"
            fails.append(f"marked {marked:.3f} of unseen members, outside {bounds}")
    elif mean < c.solvable_min_mean - _EPS:
        fails.append(f"mean soft score {mean:.3f} on the unrevealed pool < {c.solvable_min_mean:.3f}")
    reason = "; ".join(fails) or "passed"
    return ProbeResult(probe, not fails, reason, mean, low, marked, rots)


def certify_slot(slot: Slot, roster: Roster, model: RoleModel, config: CertifyConfig | None = None) -> SlotCertificate:
    """Known, Hidden, Learnable, Solvable in that order; with `config.stop_early`, stop at the first failure."""
    config = config or CertifyConfig()
    if roster.id != slot.class_id:
        raise ValueError(f"roster {roster.id!r} is not the slot's class {slot.class_id!r}")
    results: list[ProbeResult] = []
    for probe in PROBES:
        results.append(run_probe(probe, slot, roster, model, config))
        if config.stop_early and not results[-1].passed:
            break
    return SlotCertificate(slot.class_id, slot.label, slot.example, tuple(results))


def redraw_slot(
    lib: Library, slots: Sequence[Slot], index: int, seed: str, exclude: set[str], used_elsewhere: set[str]
) -> Slot | None:
    """Re-draw only layer `index`: same field, universe and label; another class of that universe (not in
    `exclude` nor in another layer of the chain; classes in `used_elsewhere` last), drawn by the chain
    builder's own slot rules, with a pool disjoint from the other layers. Deterministic in `seed`."""
    rng = random.Random(seed)
    old = slots[index]
    others = [s for i, s in enumerate(slots) if i != index]
    taken = {v for s in others for v in (s.example, *s.pool())}
    same_field = [s for s in others if s.field == old.field]
    banned = frozenset().union(*(lib.rosters[s.class_id].members for s in same_field))
    same_field_values = {v for s in same_field for v in (s.example, *s.pool())}
    skip = exclude | {s.class_id for s in others}
    candidates = sorted((r for r in lib.rosters_in(old.universe) if r.id not in skip), key=lambda r: r.id)
    rng.shuffle(candidates)
    candidates.sort(key=lambda r: r.id in used_elsewhere)
    for roster in candidates:
        if roster.members & same_field_values:
            continue  # as in the chain builder: no class may claim another same-field rule's values
        drawn = draw_slot(rng, lib, roster, taken, banned)
        if drawn is not None:
            kept = {"layer": old.layer, "field": old.field, "universe": old.universe, "label": old.label}
            return Slot(**kept, class_id=roster.id, class_name=roster.name, aliases=roster.aliases, **drawn)  # type: ignore[arg-type]
    return None


def certify_release(
    release: dict[str, Any],
    lib: Library,
    model: RoleModel,
    config: CertifyConfig | None = None,
    replace: bool = False,
    *,
    date: str | None = None,
) -> dict[str, Any]:
    """A certified copy of `release` (the input is not changed). `certified` is true only when every slot
    passes. With `replace`, a failing slot is re-drawn (`redraw_slot`, seed
    "clr-certify:<release seed>:<chain id>:<layer>:<attempt>") and re-certified, up to
    `config.max_replacements` times; a slot that never passes keeps its original draw and is listed as failed."""
    config = config or CertifyConfig()
    out = copy.deepcopy(release)
    used = {s["class_id"] for ch in out["chains"] for s in ch["slots"]}
    per_slot: list[dict[str, Any]] = []
    for chain in out["chains"]:
        slots = [from_plain(Slot, s) for s in chain["slots"]]
        for i, slot in enumerate(slots):
            certs = [certify_slot(slot, lib.rosters[slot.class_id], model, config)]
            tried = {slot.class_id}
            while replace and not certs[-1].passed and len(certs) <= config.max_replacements:
                seed = f"clr-certify:{out.get('seed')}:{chain['id']}:{slot.layer}:{len(certs)}"
                new = redraw_slot(lib, slots, i, seed, tried, used)
                if new is None:
                    break
                tried.add(new.class_id)
                used.add(new.class_id)
                certs.append(certify_slot(new, lib.rosters[new.class_id], model, config))
                if certs[-1].passed:
                    slots[i] = new
                    rows = list(chain["slots"])  # a tuple when the release was built in-process
                    rows[i] = to_plain(new)
                    chain["slots"] = type(chain["slots"])(rows)
            ok = certs[-1].passed
            per_slot.append(
                {
                    "chain": chain["id"],
                    "layer": slot.layer,
                    "class_id": slots[i].class_id,
                    "passed": ok,
                    "replaced": [c.class_id for c in certs[:-1]] if ok else [],
                    "candidates": [c.report() for c in certs],
                }
            )
    failed = [f"{r['chain']}/layer {r['layer']}" for r in per_slot if not r["passed"]]
    model_id = model.backend.model_id
    when = date or datetime.now(UTC).date().isoformat()
    out["certified"] = not failed
    out["certification"] = {
        "model_id": model_id,
        "model_name": model.model_name,
        "date": when,
        "config": config.model_dump(),
        "lesson_sha256": hashlib.sha256(lesson_text().encode("utf-8")).hexdigest(),
        "replace": replace,
        "failed": failed,
        "slots": per_slot,
    }
    status = "certified, every slot passes the four probes" if not failed else "not certified"
    out["evidence_note"] = f"probes run with {model_id} on {when}: {status} ({len(failed)} of {len(per_slot)} failed)"
    return out
