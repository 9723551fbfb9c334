"""`records:` finds the list of tasks inside a JSON file (`{"examples": [...]}`, `data.items`); a path that is not
there, or not a list, is one line naming it, and the option is refused for a file that is not JSON. A file that
cannot be read at all is one line too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import ParamError
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.loader import FileTasksError


def rows(n: int) -> list[dict[str, Any]]:
    return [{"input": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(n)]


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_wrapped_list_reads_like_the_bare_one(tmp_path: Path) -> None:
    bare = FilesBenchmark(path=str(write(tmp_path / "bare.json", rows(10)))).build()
    wrapped = write(tmp_path / "wrapped.json", {"version": 2, "examples": rows(10)})
    nested = write(tmp_path / "nested.json", {"data": {"meta": {}, "items": rows(10)}})
    listed = write(tmp_path / "listed.json", {"splits": [{"rows": rows(10)}]})
    for path, records in ((wrapped, "examples"), (nested, "data.items"), (listed, "splits.0.rows")):
        tasks = FilesBenchmark(path=str(path), records=records).build()
        assert [(t.id, t.split, t.prompt) for t in tasks] == [(t.id, t.split, t.prompt) for t in bare]
    where = FilesBenchmark(path=str(nested), records="data.items").build()[0].meta["where"]
    assert where.startswith("nested.json data.items item ")


@pytest.mark.parametrize(("records", "message"), [
    ("exampels", "benchmark.params.records: w.json has no key 'exampels' — did you mean 'examples'? "
                 "(keys at the top: version, examples, data)"),
    ("data.itms", "benchmark.params.records: w.json has no key 'data.itms' — did you mean 'data.items'? "
                  "(keys at data: items)"),
    ("version", "benchmark.params.records: 'version' in w.json is a number, not a list of records"),
    ("examples.0", "benchmark.params.records: 'examples.0' in w.json is an object, not a list of records"),
    ("examples.x", "benchmark.params.records: w.json has no 'examples.x' (examples is a list of 3)"),
    ("data..items", "benchmark.params.records: 'data..items' is not a dotted path like examples or data.items"),
    ("", "w.json: the top level is an object, not a list of records; set `records:` to the key that holds the list "
         "(keys: version, examples, data)"),
])
def test_a_path_that_is_not_there_is_one_line(tmp_path: Path, records: str, message: str) -> None:
    path = write(tmp_path / "w.json", {"version": 2, "examples": rows(3), "data": {"items": rows(3)}})
    with pytest.raises(FileTasksError) as err:
        FilesBenchmark(path=str(path), records=records).build()
    assert str(err.value) == message


def test_records_only_for_json_and_checked_with_the_spec(tmp_path: Path) -> None:
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows(3)))
    with pytest.raises(ParamError, match=r"^benchmark\.params\.records: only for a JSON file \(format json\), not "
                                         r"jsonl$"):
        FilesBenchmark.check_params({"path": str(jsonl), "records": "examples"})


@pytest.mark.parametrize("name", ["t.jsonl", "t.json", "t.csv"])
def test_an_unreadable_file_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    path = tmp_path / name
    path.write_text("input,answer\na,1\n" if name.endswith(".csv") else json.dumps(rows(3)))

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "open", refuse)
    monkeypatch.setattr(Path, "read_text", refuse)
    with pytest.raises(FileTasksError) as err:
        FilesBenchmark(path=str(path)).build()
    assert str(err.value) == f"{name}: cannot be read (Permission denied)"
