"""Validate the CLR-Bench roster library (universes/*.yaml and rosters/*.yaml).

Run from anywhere:  python check_library.py [-v]

Checks
  * YAML shape of every universe and roster file;
  * unique roster ids, valid kinds, roster file name == kind;
  * every roster member exists in the roster's universe, no duplicate members,
    no two rosters of one universe with identical member sets;
  * snapshot dates are valid YYYY-MM-DD dates not in the future;
  * no value description contains any roster name or alias (case-insensitive,
    word boundaries; single-word aliases are also checked in singular form), and
    none contains a generic membership phrase ("member of", "founding member", ...);
  * usability of every roster as a hidden class:
      - at least 5 members,
      - at least one member ("pivot") that also lies in >= 2 other rosters of
        the same universe,
      - at least 8 non-members of the roster that share a competing roster
        (another roster of the same universe) with that pivot.

Prints per-kind counts and exits non-zero if any check fails or fewer than
MIN_USABLE rosters are usable.
"""

from __future__ import annotations

import datetime as _dt
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
UNIVERSE_DIR = HERE / "universes"
ROSTER_DIR = HERE / "rosters"

from evoarena.benchmarks.clr.library import KINDS  # noqa: E402  (one list of kinds for the package and this tool)

ROSTER_KEYS = ("id", "name", "kind", "universe", "source", "snapshot", "aliases", "members")
MIN_MEMBERS = 5
MIN_OTHER_ROSTERS_FOR_PIVOT = 2
MIN_COMPETING_NONMEMBERS = 8
MIN_USABLE = 80
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Generic phrases that would leak membership of *some* grouping.
BANNED_PHRASES = (
    "member of",
    "members of",
    "member state",
    "member states",
    "founding member",
    "founder member",
    "founding members",
    "member airline",
    "alliance",
)


def _load_yaml(path: Path, errors: list[str]):
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except yaml.YAMLError as exc:  # pragma: no cover - reported, not raised
        errors.append(f"{path.name}: YAML error: {exc}")
        return None


def load_universes(errors: list[str]) -> dict[str, dict[str, str]]:
    universes: dict[str, dict[str, str]] = {}
    for path in sorted(UNIVERSE_DIR.glob("*.yaml")):
        doc = _load_yaml(path, errors)
        if doc is None:
            continue
        where = f"universes/{path.name}"
        if not isinstance(doc, dict):
            errors.append(f"{where}: top level must be a mapping")
            continue
        extra = set(doc) - {"universe", "description", "values"}
        if extra:
            errors.append(f"{where}: unexpected keys {sorted(extra)}")
        uid = doc.get("universe")
        if not isinstance(uid, str) or not ID_RE.match(uid):
            errors.append(f"{where}: 'universe' must be a lowercase id")
            continue
        if uid != path.stem:
            errors.append(f"{where}: universe id '{uid}' != file name '{path.stem}'")
        if not isinstance(doc.get("description"), str) or not doc["description"].strip():
            errors.append(f"{where}: missing 'description'")
        values = doc.get("values")
        if not isinstance(values, dict) or not values:
            errors.append(f"{where}: 'values' must be a non-empty mapping")
            continue
        clean: dict[str, str] = {}
        seen_lower: dict[str, str] = {}
        for name, desc in values.items():
            if not isinstance(name, str) or not name.strip():
                errors.append(f"{where}: value name {name!r} is not a non-empty string")
                continue
            if not isinstance(desc, str) or not desc.strip():
                errors.append(f"{where}: value '{name}' has no description")
                continue
            if name.lower() in seen_lower:
                errors.append(f"{where}: value '{name}' duplicates '{seen_lower[name.lower()]}'")
            seen_lower[name.lower()] = name
            if "\n" in desc.strip():
                errors.append(f"{where}: description of '{name}' spans several lines")
            clean[name] = desc.strip()
        if uid in universes:
            errors.append(f"{where}: universe '{uid}' defined twice")
        universes[uid] = clean
    return universes


def load_rosters(errors: list[str], universes: dict[str, dict[str, str]]) -> list[dict]:
    rosters: list[dict] = []
    ids: set[str] = set()
    today = _dt.date.today()
    for path in sorted(ROSTER_DIR.glob("*.yaml")):
        doc = _load_yaml(path, errors)
        if doc is None:
            continue
        where = f"rosters/{path.name}"
        if path.stem not in KINDS:
            errors.append(f"{where}: file name must be one of {KINDS}")
        if not isinstance(doc, list) or not doc:
            errors.append(f"{where}: top level must be a non-empty list")
            continue
        for i, r in enumerate(doc):
            tag = f"{where}[{i}]"
            if not isinstance(r, dict):
                errors.append(f"{tag}: roster must be a mapping")
                continue
            missing = [k for k in ROSTER_KEYS if k not in r]
            extra = [k for k in r if k not in ROSTER_KEYS]
            if missing:
                errors.append(f"{tag}: missing keys {missing}")
                continue
            if extra:
                errors.append(f"{tag}: unexpected keys {extra}")
            rid = r["id"]
            tag = f"{where}:{rid}"
            if not isinstance(rid, str) or not ID_RE.match(rid):
                errors.append(f"{tag}: id must match {ID_RE.pattern}")
            if rid in ids:
                errors.append(f"{tag}: duplicate id")
            ids.add(rid)
            for key in ("name", "source"):
                if not isinstance(r[key], str) or not r[key].strip():
                    errors.append(f"{tag}: '{key}' must be a non-empty string")
            if r["kind"] not in KINDS:
                errors.append(f"{tag}: kind '{r['kind']}' not in {KINDS}")
            elif r["kind"] != path.stem:
                errors.append(f"{tag}: kind '{r['kind']}' stored in {path.name}")
            snap = r["snapshot"]
            if isinstance(snap, _dt.date):
                snap = snap.isoformat()
            if not isinstance(snap, str) or not DATE_RE.match(snap):
                errors.append(f"{tag}: snapshot must be YYYY-MM-DD, got {snap!r}")
            else:
                try:
                    d = _dt.date.fromisoformat(snap)
                    if d > today:
                        errors.append(f"{tag}: snapshot {snap} is in the future")
                except ValueError:
                    errors.append(f"{tag}: snapshot {snap} is not a valid date")
            aliases = r["aliases"]
            if not isinstance(aliases, list) or not aliases or not all(
                isinstance(a, str) and a.strip() for a in aliases
            ):
                errors.append(f"{tag}: aliases must be a non-empty list of strings")
                aliases = []
            uni = r["universe"]
            if uni not in universes:
                errors.append(f"{tag}: unknown universe '{uni}'")
                values = {}
            else:
                values = universes[uni]
            members = r["members"]
            if not isinstance(members, list) or not members:
                errors.append(f"{tag}: members must be a non-empty list")
                members = []
            if len(set(map(str, members))) != len(members):
                dups = sorted({m for m in members if members.count(m) > 1})
                errors.append(f"{tag}: duplicate members {dups}")
            for m in members:
                if m not in values:
                    errors.append(f"{tag}: member '{m}' not in universe '{uni}'")
            rosters.append(
                {
                    "id": rid,
                    "name": r["name"],
                    "kind": r["kind"],
                    "universe": uni,
                    "aliases": list(aliases),
                    "members": [str(m) for m in members],
                    "file": path.name,
                }
            )
    return rosters


def _patterns(rosters: list[dict]) -> list[tuple[str, re.Pattern]]:
    """(label, regex) for every roster name and alias, plus singular forms."""
    phrases: dict[str, str] = {}
    for r in rosters:
        for phrase in [r["name"], *r["aliases"]]:
            p = phrase.strip()
            phrases.setdefault(p.lower(), f"{r['id']}: '{p}'")
            words = p.split()
            if len(words) == 1 and len(p) > 5 and p.lower().endswith("s"):
                singular = p[:-1]
                if singular.lower().endswith("ie"):
                    singular = singular[:-2] + "y"
                phrases.setdefault(singular.lower(), f"{r['id']}: '{p}' (singular)")
    for b in BANNED_PHRASES:
        phrases.setdefault(b, f"generic phrase '{b}'")
    out = []
    for phrase, label in phrases.items():
        original = label.split("'")[1] if "'" in label else phrase
        # Short all-capital acronyms ("EU", "CAN", "SCO") are matched case-sensitively,
        # so that ordinary words ("can", "Eu" as a chemical symbol) do not trigger.
        if original.isupper() and len(original) <= 6 and " " not in original:
            rx = re.compile(r"(?<!\w)" + re.escape(original) + r"(?!\w)")
        else:
            rx = re.compile(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", re.IGNORECASE)
        out.append((label, rx))
    return out


def check_descriptions(errors, universes, rosters) -> None:
    pats = _patterns(rosters)
    for uid, values in universes.items():
        for name, desc in values.items():
            for label, rx in pats:
                if rx.search(desc):
                    errors.append(
                        f"universes/{uid}.yaml: description of '{name}' contains {label}"
                    )


def check_duplicates(errors, rosters) -> None:
    seen: dict[tuple, str] = {}
    for r in rosters:
        key = (r["universe"], frozenset(r["members"]))
        if key in seen:
            errors.append(f"roster {r['id']} has the same members as {seen[key]}")
        seen[key] = r["id"]


def usability(rosters: list[dict], universes: dict[str, dict[str, str]]) -> dict[str, dict]:
    by_uni: dict[str, list[dict]] = defaultdict(list)
    for r in rosters:
        by_uni[r["universe"]].append(r)
    result: dict[str, dict] = {}
    for r in rosters:
        members = set(r["members"])
        others = [s for s in by_uni[r["universe"]] if s["id"] != r["id"]]
        best = None  # (n_competing_nonmembers, pivot, n_other_rosters)
        n_pivots = 0
        for m in r["members"]:
            containing = [s for s in others if m in s["members"]]
            if len(containing) < MIN_OTHER_ROSTERS_FOR_PIVOT:
                continue
            n_pivots += 1
            competing = set()
            for s in containing:
                competing |= set(s["members"]) - members
            cand = (len(competing), m, len(containing))
            if best is None or cand > best:
                best = cand
        n_nonmembers = len(set(universes.get(r["universe"], {})) - members)
        usable = (
            len(members) >= MIN_MEMBERS
            and best is not None
            and best[0] >= MIN_COMPETING_NONMEMBERS
        )
        result[r["id"]] = {
            "members": len(members),
            "nonmembers": n_nonmembers,
            "pivots": n_pivots,
            "best_pivot": best[1] if best else None,
            "pivot_other_rosters": best[2] if best else 0,
            "competing_nonmembers": best[0] if best else 0,
            "usable": usable,
        }
    return result


def main(argv: list[str]) -> int:
    verbose = "-v" in argv or "--verbose" in argv
    errors: list[str] = []
    warnings: list[str] = []
    universes = load_universes(errors)
    rosters = load_rosters(errors, universes)
    check_descriptions(errors, universes, rosters)
    check_duplicates(errors, rosters)

    used_values: dict[str, set[str]] = defaultdict(set)
    for r in rosters:
        used_values[r["universe"]].update(r["members"])
    for uid, values in universes.items():
        if uid not in used_values:
            warnings.append(f"universe '{uid}' is not used by any roster")
        if len(values) < 40:
            warnings.append(f"universe '{uid}' has only {len(values)} values")

    use = usability(rosters, universes)
    per_kind_total: dict[str, int] = defaultdict(int)
    per_kind_usable: dict[str, int] = defaultdict(int)
    for r in rosters:
        per_kind_total[r["kind"]] += 1
        if use[r["id"]]["usable"]:
            per_kind_usable[r["kind"]] += 1

    if verbose:
        print(f"{'roster':42s} {'universe':14s} mem  non piv pivot(other)  compet usable")
        for r in sorted(rosters, key=lambda x: (KINDS.index(x["kind"]) if x["kind"] in KINDS else 99, x["id"])):
            u = use[r["id"]]
            print(
                f"{r['id']:42s} {r['universe']:14s} {u['members']:3d} {u['nonmembers']:4d} "
                f"{u['pivots']:3d} {str(u['best_pivot'])[:22]:22s}({u['pivot_other_rosters']}) "
                f"{u['competing_nonmembers']:4d}  {'yes' if u['usable'] else 'NO'}"
            )
        print()

    print("Universes:")
    for uid, values in sorted(universes.items()):
        print(f"  {uid:16s} {len(values):4d} values, {len(used_values.get(uid, ())):4d} used in rosters")
    print("\nRosters per kind (usable as hidden class / total):")
    total_usable = 0
    for k in KINDS:
        total_usable += per_kind_usable[k]
        print(f"  {k:22s} {per_kind_usable[k]:3d} / {per_kind_total[k]:3d}")
    print(f"  {'TOTAL':22s} {total_usable:3d} / {len(rosters):3d}")

    not_usable = [r["id"] for r in rosters if not use[r["id"]]["usable"]]
    if not_usable:
        print("\nNot usable as hidden class (kept as competitors):")
        for rid in not_usable:
            u = use[rid]
            why = []
            if u["members"] < MIN_MEMBERS:
                why.append(f"{u['members']} members")
            if u["pivots"] == 0:
                why.append("no member in >=2 other rosters")
            elif u["competing_nonmembers"] < MIN_COMPETING_NONMEMBERS:
                why.append(f"only {u['competing_nonmembers']} competing non-members")
            print(f"  {rid}: {', '.join(why)}")

    for w in warnings:
        print(f"WARNING: {w}")
    if errors:
        print(f"\n{len(errors)} error(s):")
        for e in errors:
            print(f"ERROR: {e}")
    if total_usable < MIN_USABLE:
        print(f"\nFAIL: only {total_usable} usable hidden classes (need >= {MIN_USABLE})")
    ok = not errors and total_usable >= MIN_USABLE
    print("\nOK" if ok else "\nFAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
