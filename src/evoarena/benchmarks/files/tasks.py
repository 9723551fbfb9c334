"""Rows to tasks: field mapping, the prompt template, stable ids, and the train/val/test split (by a column, or by
ratio with a seed over source groups, so that all tasks of one source land on one side)."""

from __future__ import annotations

import hashlib
import json
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evoarena.api import Split, Task
from evoarena.benchmarks.files.graders import Choice, Grader, choice_list, lettered
from evoarena.benchmarks.files.loader import FileTasksError, Row

SPLITS: tuple[Split, ...] = ("train", "val", "test")
_SPLIT_NAMES: dict[str, Split] = {"train": "train", "training": "train", "val": "val", "valid": "val",
                                  "validation": "val", "dev": "val", "test": "test", "testing": "test"}


@dataclass(frozen=True)
class Columns:
    """Which columns hold what (empty: not used)."""

    input: str
    answer: str
    id: str = ""
    source: str = ""
    split: str = ""


@dataclass(frozen=True)
class Draft:
    """A task before its split is known."""

    id: str
    source: str
    prompt: str
    references: tuple[str, ...]
    fields: dict[str, Any]
    where: str
    split: Split | None = None


def template_fields(template: str) -> list[str]:
    """The field names `template` uses; a one-line error for a malformed template or a positional `{}`."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise FileTasksError(f"benchmark.params.template: {err} (write a literal brace as {{{{ or }}}})") from None
    names = []
    for _, name, _, _ in parsed:
        if name is None:
            continue
        if not name or name.isdigit():
            raise FileTasksError("benchmark.params.template: every {field} needs a column name, e.g. {input}")
        if "." in name or "[" in name:
            raise FileTasksError(f"benchmark.params.template: {{{name}}}: fields are plain column names "
                                 "(no attributes or indexes)")
        names.append(name)
    return names


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _references(value: Any, where: str, column: str) -> tuple[str, ...]:
    values = value if isinstance(value, list) else [value]
    refs = tuple(_text(v).strip() for v in values if _text(v).strip())
    if not refs:
        raise FileTasksError(f"{where}: empty answer (column {column!r})")
    return refs


def _column(row: Row, name: str, param: str, columns: Sequence[str]) -> Any:
    if name not in row.fields:
        raise FileTasksError(f"{row.where}: no column {name!r} (benchmark.params.{param}; "
                             f"columns: {', '.join(columns)})")
    return row.fields[name]


def _hash_id(input_text: str, references: Sequence[str]) -> str:
    """A hash of the input and answer texts, so `4` and `"4"`, or the same rows as CSV or JSONL, give one id."""
    answer: str | list[str] = references[0] if len(references) == 1 else list(references)
    blob = json.dumps([input_text, answer], ensure_ascii=False)
    return "t" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:10]


def drafts(rows: Sequence[Row], columns: Sequence[str], cols: Columns, template: str, grader: Grader,
           ) -> tuple[list[Draft], int]:
    """One draft per row (exact duplicates — same prompt and answers, no id column — dropped and counted)."""
    names = template_fields(template)
    out: list[Draft] = []
    first_where: dict[str, str] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    dropped = 0
    for row in rows:
        raw_input = _column(row, cols.input, "input", columns)
        input_text = _text(raw_input)
        if not input_text.strip():
            raise FileTasksError(f"{row.where}: empty input (column {cols.input!r})")
        answer = _column(row, cols.answer, "answer", columns)
        refs = _references(answer, row.where, cols.answer)
        for ref in refs:
            why = grader.check_reference(ref, row.fields)
            if why:
                raise FileTasksError(f"{row.where}: {why} (grader {grader.name})")
        values = {k: _text(v) for k, v in row.fields.items()}
        if isinstance(grader, Choice) and "options" not in values:
            values["options"] = lettered(choice_list(row.fields.get(str(grader.params.get("choices")))))
        values["input"] = input_text
        for name in names:
            if name not in values:
                raise FileTasksError(f"{row.where}: the template names {{{name}}}, which this row lacks "
                                     f"(columns: {', '.join(row.fields)})")
        prompt = template.format_map(values)
        if cols.id:
            tid = _text(_column(row, cols.id, "id", columns)).strip()
            if not tid:
                raise FileTasksError(f"{row.where}: empty id (column {cols.id!r})")
            if tid in first_where:
                raise FileTasksError(f"{row.where}: duplicate id {tid!r} (first on {first_where[tid]})")
        else:
            if (prompt, refs) in seen:
                dropped += 1
                continue
            seen.add((prompt, refs))
            base = _hash_id(input_text, refs)
            tid, k = base, 1
            while tid in first_where:  # the same input and answer with a different prompt (other fields)
                k += 1
                tid = f"{base}-{k}"
        first_where[tid] = row.where
        source = _text(_column(row, cols.source, "source", columns)).strip() if cols.source else tid
        if cols.source and not source:
            raise FileTasksError(f"{row.where}: empty source (column {cols.source!r})")
        split: Split | None = None
        if cols.split:
            value = _text(_column(row, cols.split, "split", columns)).strip().lower()
            if value not in _SPLIT_NAMES:
                raise FileTasksError(f"{row.where}: split {value!r} is not train, val or test "
                                     f"(column {cols.split!r}; also accepted: {', '.join(sorted(_SPLIT_NAMES))})")
            split = _SPLIT_NAMES[value]
        out.append(Draft(tid, source, prompt, refs, dict(row.fields), row.where, split))
    return out, dropped


def check_ratio(ratio: Sequence[Any]) -> tuple[float, float, float]:
    if len(ratio) != 3 or not all(isinstance(r, int | float) and not isinstance(r, bool) and r >= 0 for r in ratio):
        raise FileTasksError(f"benchmark.params.ratio: expected three non-negative numbers [train, val, test], "
                             f"got {list(ratio)!r}")
    total = float(sum(ratio))
    if total <= 0:
        raise FileTasksError("benchmark.params.ratio: the three shares sum to 0")
    return (ratio[0] / total, ratio[1] / total, ratio[2] / total)


def split_by_ratio(items: Sequence[Draft], ratio: tuple[float, float, float], seed: int) -> list[Draft]:
    """Source groups (sorted, then shuffled with `seed`) laid end to end; each group goes to the split its midpoint
    falls in, so a whole source stays on one side and the sizes follow the ratio as closely as the groups allow."""
    groups: dict[str, list[Draft]] = {}
    for d in items:
        groups.setdefault(d.source, []).append(d)
    order = sorted(groups)
    random.Random(f"files-split:{seed}").shuffle(order)
    n = len(items)
    bounds = (ratio[0] * n, (ratio[0] + ratio[1]) * n)
    out: list[Draft] = []
    start = 0
    for source in order:
        size = len(groups[source])
        middle = start + size / 2
        split: Split = "train" if middle < bounds[0] else "val" if middle < bounds[1] else "test"
        out.extend(Draft(d.id, d.source, d.prompt, d.references, d.fields, d.where, split) for d in groups[source])
        start += size
    return out


def check_splits(items: Sequence[Draft], how: str) -> None:
    """Every split non-empty, and no source on both the test side and train/val (the protocol's rule, checked here
    so the error names the row)."""
    for s in SPLITS:
        if not any(d.split == s for d in items):
            sizes = ", ".join(f"{x} {sum(d.split == x for d in items)}" for x in SPLITS)
            n = len({d.source for d in items})
            sources = f"{n} source{'s' * (n != 1)}"
            raise FileTasksError(f"split {s!r} is empty ({len(items)} tasks in {sources}, {how}: {sizes}); "
                                 "add rows or sources, change the ratio, or use a split column")
    practice = {d.source: d for d in items if d.split != "test"}
    for d in items:
        if d.split == "test" and d.source in practice:
            other = practice[d.source]
            raise FileTasksError(f"{d.where}: source {d.source!r} is in test and in {other.split} "
                                 f"({other.where}); all tasks of one source must be on one side")


def to_tasks(items: Sequence[Draft]) -> list[Task]:
    order = {s: i for i, s in enumerate(SPLITS)}
    ranked = sorted(enumerate(items), key=lambda p: (order[p[1].split or "test"], p[0]))
    return [Task(d.id, d.split or "test", d.source, d.prompt, d.references[0],
                 {"references": list(d.references), "row": d.fields, "where": d.where}) for _, d in ranked]
