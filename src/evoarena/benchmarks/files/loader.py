"""Reading a user's task file into rows: JSONL, JSON (an array of objects, or one at a dotted path inside it),
CSV/TSV, or a Hugging Face `datasets` folder written by `save_to_disk` (only when the `datasets` package is
installed). Every problem is one line that names the file and, where there is one, the line."""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evoarena.api import ParamError
from evoarena.wording import did_you_mean, listing

FORMATS = ("jsonl", "json", "csv", "tsv", "hf")
_BY_SUFFIX = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "tsv"}


class FileTasksError(ParamError):
    """A task file, or a param, that cannot be used; the message is one line naming the param, or the file and line.
    A ParamError, so the spec check reports it like any other bad param."""


@dataclass(frozen=True)
class Row:
    """One record of the file and where it came from (`tasks.jsonl:7`)."""

    where: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Loaded:
    path: Path
    format: str
    rows: list[Row]
    columns: list[str]
    sha256: str


def resolve(path: str) -> Path:
    """`path` as given (absolute) or against the current directory; a one-line error when nothing is there."""
    if not path:
        raise FileTasksError("benchmark.params.path: required (the JSONL, CSV or JSON file of your tasks)")
    p = Path(path).expanduser()
    full = p if p.is_absolute() else Path.cwd() / p
    if not full.exists():
        where = "" if p.is_absolute() else f" (relative paths resolve against the current directory {Path.cwd()})"
        raise FileTasksError(f"benchmark.params.path: no such file {path!r}{where}")
    return full


def detect(path: Path, format: str) -> str:
    if format:
        if format not in FORMATS:
            raise FileTasksError(f"benchmark.params.format: {format!r} is not one of {', '.join(FORMATS)}")
        return format
    if path.is_dir():
        return "hf"
    fmt = _BY_SUFFIX.get(path.suffix.lower())
    if fmt is None:
        raise FileTasksError(f"benchmark.params.path: cannot tell the format of {path.name!r} from its suffix "
                             f"(use .jsonl, .json, .csv or .tsv, or set format: {', '.join(FORMATS)})")
    return fmt


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(str(f.relative_to(path)).encode() if path.is_dir() else b"")
        h.update(f.read_bytes())
    return h.hexdigest()


def _jsonl(path: Path) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path.name}:{n}"
            try:
                obj = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as err:
                raise FileTasksError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
            if not isinstance(obj, dict):
                raise FileTasksError(f"{where}: expected a JSON object per line, got {json_kind(obj)}")
            yield Row(where, obj)


def _json(path: Path, records: str = "") -> Iterator[Row]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise FileTasksError(f"{path.name}:{err.lineno}: not valid JSON ({err.msg} at column {err.colno})") from None
    data = find_records(data, records, path.name)
    if isinstance(data, dict):
        raise FileTasksError(f"{path.name}: the top level is an object, not a list of records; set `records:` to the "
                             f"key that holds the list (keys: {listing(data)})")
    if not isinstance(data, list):
        raise FileTasksError(f"{path.name}: expected a JSON array of objects, got {json_kind(data)}")
    prefix = f"{path.name} {records}" if records else path.name
    for i, obj in enumerate(data, 1):
        if not isinstance(obj, dict):
            raise FileTasksError(f"{prefix} item {i}: expected a JSON object, got {json_kind(obj)}")
        yield Row(f"{prefix} item {i}", obj)


def find_records(data: Any, records: str, name: str) -> Any:
    """The value at the dotted path `records` inside a JSON document (`examples`, `data.items`; a list's element by
    its index, `splits.0`); the document itself when `records` is empty. A missing key or a value that is not a list
    is one line naming the path."""
    if not records:
        return data
    node: Any = data
    walked: list[str] = []
    for part in records.split("."):
        here = ".".join([*walked, part])
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            keys = [str(k) for k in node]
            paths = [".".join([*walked, k]) for k in keys]
            raise FileTasksError(f"benchmark.params.records: {name} has no key {here!r}{did_you_mean(here, paths)} "
                                 f"(keys {'at ' + '.'.join(walked) if walked else 'at the top'}: {listing(keys)})")
        else:
            what = f"a list of {len(node)}" if isinstance(node, list) else json_kind(node)
            raise FileTasksError(f"benchmark.params.records: {name} has no {here!r} ({'.'.join(walked) or 'the top'} "
                                 f"is {what})")
        walked.append(part)
    if not isinstance(node, list):
        raise FileTasksError(f"benchmark.params.records: {records!r} in {name} is {json_kind(node)}, not a list of "
                             "records")
    return node


def json_kind(value: Any) -> str:
    """A JSON value's kind as a reader names it: `an object`, `a list`, `a number`, `text`, `true/false`, `null`."""
    if isinstance(value, bool):
        return "true/false"
    kinds = {dict: "an object", list: "a list", str: "text", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


def _csv(path: Path, delimiter: str) -> Iterator[Row]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh, delimiter=delimiter)
        header = reader.fieldnames or []
        if not header:
            return
        for record in reader:
            where = f"{path.name}:{reader.line_num}"
            if None in record:
                raise FileTasksError(f"{where}: more cells than the header's {len(header)} columns")
            if all(v in (None, "") for v in record.values()):
                continue
            yield Row(where, {k: ("" if v is None else v) for k, v in record.items()})


def _hf(path: Path) -> Iterator[Row]:
    try:
        import datasets
    except ImportError:
        raise FileTasksError(f"benchmark.params.path: {path.name!r} is a directory (a Hugging Face datasets folder?); "
                             "reading one needs the `datasets` package, which is not installed "
                             "(pip install datasets)") from None
    try:
        data = datasets.load_from_disk(str(path))
    except Exception as err:  # the library's own errors vary by version
        raise FileTasksError(f"benchmark.params.path: {path.name!r}: not a datasets folder written by save_to_disk "
                             f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})") from None
    parts = list(data.items()) if isinstance(data, dict) else [("", data)]  # a DatasetDict is a dict of splits
    for split, ds in parts:
        for i, record in enumerate(ds, 1):
            fields = dict(record)
            if split:
                fields.setdefault("_split", split)
            yield Row(f"{path.name}/{split + '/' if split else ''}row {i}", fields)


def check_records(records: str, fmt: str) -> None:
    """`records` names a path inside a JSON document, so it is refused for any other format."""
    if records and fmt != "json":
        raise FileTasksError(f"benchmark.params.records: only for a JSON file (format json), not {fmt}")
    if records and not all(records.split(".")):
        raise FileTasksError(f"benchmark.params.records: {records!r} is not a dotted path like examples or data.items")


def load(path: str, format: str = "", records: str = "") -> Loaded:
    """Every row of the file at `path` (`format` '' guesses from the suffix; a directory is a datasets folder);
    `records`: the dotted path to the list inside a JSON file."""
    full = resolve(path)
    fmt = detect(full, format)
    check_records(records, fmt)
    if fmt != "hf" and full.is_dir():
        raise FileTasksError(f"benchmark.params.path: {path!r} is a directory, not a {fmt} file")
    if fmt == "hf" and not full.is_dir():
        raise FileTasksError(f"benchmark.params.path: format hf needs a directory written by save_to_disk, "
                             f"not the file {path!r}")
    reader = {"jsonl": lambda: _jsonl(full), "json": lambda: _json(full, records), "csv": lambda: _csv(full, ","),
              "tsv": lambda: _csv(full, "\t"), "hf": lambda: _hf(full)}[fmt]
    try:
        rows = list(reader())
    except UnicodeDecodeError as err:
        raise FileTasksError(f"{full.name}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except csv.Error as err:
        raise FileTasksError(f"{full.name}: not readable as {fmt.upper()} ({err})") from None
    except OSError as err:
        raise FileTasksError(f"{full.name}: cannot be read ({err.strerror or type(err).__name__})") from None
    if not rows:
        raise FileTasksError(f"{full.name}: no rows")
    columns = list(dict.fromkeys(k for r in rows for k in r.fields))
    return Loaded(full, fmt, rows, columns, _digest(full))
