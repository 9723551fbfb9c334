"""The `files` benchmark's loader: JSONL, JSON, CSV/TSV and a saved `datasets` folder; field mapping and template;
splits by column, by ratio, and by source groups (a source never straddles the split); stable ids; one-line errors."""

from __future__ import annotations

import csv
import json
import sys
import types
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evoarena.api import ParamError, Task
from evoarena.benchmarks.files import FilesBenchmark
from evoarena.benchmarks.files.loader import FileTasksError


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, Any]], delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)
    return path


def rows(n: int, **extra: Any) -> list[dict[str, Any]]:
    return [{"input": f"What is {i} + {i}?", "answer": str(2 * i), **{k: v(i) for k, v in extra.items()}}
            for i in range(n)]


def build(path: Path, **params: Any) -> list[Task]:
    return FilesBenchmark(path=str(path), **params).build()


def sizes(tasks: list[Task]) -> tuple[int, int, int]:
    c = Counter(t.split for t in tasks)
    return c["train"], c["val"], c["test"]


# --- formats ---------------------------------------------------------------------------------------------------------


def test_jsonl_with_the_default_columns(tmp_path: Path) -> None:
    tasks = build(write_jsonl(tmp_path / "t.jsonl", rows(20)))
    assert sizes(tasks) == (6, 4, 10)
    assert {t.prompt for t in tasks} == {f"What is {i} + {i}?" for i in range(20)}
    by_prompt = {t.prompt: t for t in tasks}
    assert by_prompt["What is 3 + 3?"].reference == "6"
    assert all(t.source_id == t.id for t in tasks)


def test_csv_tsv_and_json_give_the_same_tasks_as_jsonl(tmp_path: Path) -> None:
    data = rows(12, topic=lambda i: f"t{i % 3}")
    reference = build(write_jsonl(tmp_path / "t.jsonl", data), template="[{topic}] {input}")
    (tmp_path / "t.json").write_text(json.dumps(data))
    for path in (write_csv(tmp_path / "t.csv", data), write_csv(tmp_path / "t.tsv", data, "\t"), tmp_path / "t.json"):
        tasks = build(path, template="[{topic}] {input}")
        assert [t.payload_hash() for t in tasks] == [t.payload_hash() for t in reference]  # ids, splits, prompts


def test_where_names_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("input,answer\nq1,a1\n\n,\nq2,a2\nq3,a3\n", encoding="utf-8")
    assert sorted(t.meta["where"] for t in build(path, ratio=[1, 1, 1])) == ["t.csv:2", "t.csv:5", "t.csv:6"]
    (tmp_path / "t.json").write_text(json.dumps(rows(3)))
    assert sorted(t.meta["where"] for t in build(tmp_path / "t.json", ratio=[1, 1, 1])) == [
        "t.json item 1", "t.json item 2", "t.json item 3"]
    path.write_text("input,answer\nq1,a1,extra\n", encoding="utf-8")
    with pytest.raises(FileTasksError, match=r"^t\.csv:2: more cells than the header's 2 columns$"):
        build(path)


def test_a_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffinput,answer\nq1,a1\nq2,a2\nq3,a3\n".encode())
    assert len(build(path, ratio=[1, 1, 1])) == 3


def test_a_json_list_of_answers_is_a_set_of_accepted_answers(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"input": f"q{i}", "answer": ["Paris", "paris, France"]}
                                              for i in range(3)])
    bench = FilesBenchmark(path=str(path), ratio=[1, 1, 1], grader="normalized")
    task = bench.build()[0]
    assert task.reference == "Paris" and task.meta["references"] == ["Paris", "paris, France"]
    assert bench.grade(task, "Paris, France").passed and bench.grade(task, "paris").passed
    assert not bench.grade(task, "France").passed


def test_a_datasets_folder_without_the_library_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "saved"
    folder.mkdir()
    monkeypatch.setitem(sys.modules, "datasets", None)  # importing it now raises ImportError
    with pytest.raises(FileTasksError, match=r"^benchmark\.params\.path: 'saved' is a directory \(a Hugging Face "
                                             r"datasets folder\?\); reading one needs the `datasets` package"):
        build(folder)


def test_a_datasets_folder_through_load_from_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "dataset_info.json").write_text("{}")
    splits = {"train": [{"q": "a?", "a": "1"}, {"q": "b?", "a": "2"}], "validation": [{"q": "c?", "a": "3"}],
              "test": [{"q": "d?", "a": "4"}, {"q": "e?", "a": "5"}]}

    class FakeDatasetDict(dict):  # type: ignore[type-arg]
        pass

    fake = types.ModuleType("datasets")
    fake.load_from_disk = lambda path: FakeDatasetDict(splits)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", fake)
    tasks = build(folder, input="q", answer="a", split="_split")
    assert sizes(tasks) == (2, 1, 2)
    assert [t.meta["where"] for t in tasks if t.split == "val"] == ["saved/validation/row 1"]
    fake.load_from_disk = lambda path: [{"q": f"{i}?", "a": str(i)} for i in range(10)]  # type: ignore[attr-defined]
    assert sizes(build(folder, input="q", answer="a")) == (3, 2, 5)


# --- template and columns -------------------------------------------------------------------------------------------


def test_the_template_takes_any_column(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [
        {"question": f"Capital of country {i}?", "gold": "X", "choices": ["X", "Y"], "n": i} for i in range(3)])
    tasks = build(path, input="question", answer="gold", ratio=[1, 1, 1],
                  template="Question: {question}\nChoices: {choices}\nNumber {n}; input again: {input}")
    assert tasks[0].prompt.startswith("Question: Capital of country")
    assert "\nChoices: X, Y\nNumber " in tasks[0].prompt and tasks[0].prompt.endswith("?")


def test_the_choice_grader_offers_lettered_options(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [
        {"input": f"Pick {i}", "answer": "Paris", "choices": "London|Paris"} for i in range(3)])
    tasks = build(path, ratio=[1, 1, 1], grader="choice", template="{input}\n{options}")
    assert tasks[0].prompt.endswith("\nA. London\nB. Paris")


def test_a_literal_brace_in_the_template(tmp_path: Path) -> None:
    tasks = build(write_jsonl(tmp_path / "t.jsonl", rows(3)), ratio=[1, 1, 1], template='{{"q": "{input}"}}')
    assert tasks[0].prompt.startswith('{"q": "What is')


@pytest.mark.parametrize(("template", "message"), [
    ("{nope}", r"^t\.jsonl:1: the template names \{nope\}, which this row lacks \(columns: input, answer\)$"),
    ("{input", r"^benchmark\.params\.template: .*write a literal brace as \{\{"),
    ("{} {input}", r"^benchmark\.params\.template: every \{field\} needs a column name"),
    ("{input.upper}", r"fields are plain column names"),
])
def test_template_errors(tmp_path: Path, template: str, message: str) -> None:
    with pytest.raises(FileTasksError, match=message):
        build(write_jsonl(tmp_path / "t.jsonl", rows(3)), template=template)


# --- stable ids ------------------------------------------------------------------------------------------------------


def test_ids_are_stable_under_reordering_and_split_changes(tmp_path: Path) -> None:
    data = rows(20)
    first = {t.prompt: t.id for t in build(write_jsonl(tmp_path / "a.jsonl", data))}
    again = {t.prompt: t.id for t in build(write_jsonl(tmp_path / "b.jsonl", data[::-1]), seed=7, ratio=[1, 1, 1])}
    assert first == again
    assert all(i.startswith("t") and len(i) == 11 for i in first.values())


def test_ids_do_not_depend_on_the_template_or_the_answer_type(tmp_path: Path) -> None:
    a = build(write_jsonl(tmp_path / "a.jsonl", [{"input": "q", "answer": 4}, {"input": "r", "answer": 5},
                                                 {"input": "s", "answer": 6}]), ratio=[1, 1, 1])
    b = build(write_csv(tmp_path / "b.csv", [{"input": "q", "answer": "4"}, {"input": "r", "answer": "5"},
                                             {"input": "s", "answer": "6"}]), ratio=[1, 1, 1], template="Q: {input}")
    assert sorted(t.id for t in a) == sorted(t.id for t in b)


def test_exact_duplicates_are_dropped_and_near_ones_kept_apart(tmp_path: Path) -> None:
    data = [{"input": "q", "answer": "1", "hint": "h1"}, {"input": "q", "answer": "1", "hint": "h1"},
            {"input": "q", "answer": "1", "hint": "h2"}, {"input": "r", "answer": "2", "hint": ""},
            {"input": "s", "answer": "3", "hint": ""}]
    bench = FilesBenchmark(path=str(write_jsonl(tmp_path / "t.jsonl", data)), template="{input} {hint}",
                           ratio=[1, 1, 1])
    tasks = bench.build()
    ids = sorted(t.id for t in tasks)
    assert len(tasks) == 4 and bench.info()["duplicates_dropped"] == 1
    base = [i for i in ids if i.endswith("-2")][0][:-2]
    assert base in ids  # the same input and answer with another prompt: the second gets `-2`


def test_an_id_column(tmp_path: Path) -> None:
    tasks = build(write_jsonl(tmp_path / "t.jsonl", rows(6, key=lambda i: f"k{i}")), id="key")
    assert sorted(t.id for t in tasks) == [f"k{i}" for i in range(6)]
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:3: duplicate id 'k0' \(first on t\.jsonl:1\)$"):
        build(write_jsonl(tmp_path / "t.jsonl", rows(4, key=lambda i: "k0" if i in (0, 2) else f"k{i}")), id="key")


# --- splits ----------------------------------------------------------------------------------------------------------


def test_split_by_ratio_is_seeded_and_exact_for_single_sources(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", rows(20))
    a, b, c = build(path, seed=0), build(path, seed=0), build(path, seed=1)
    assert a == b and {t.id: t.split for t in a} != {t.id: t.split for t in c}
    assert sizes(build(path, ratio=[0.5, 0.25, 0.25])) == (10, 5, 5)
    assert sizes(build(path, ratio=[6, 2, 2])) == (12, 4, 4)  # shares are normalised
    assert [t.split for t in a] == sorted((t.split for t in a), key=["train", "val", "test"].index)


def test_source_level_split_keeps_each_source_on_one_side(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", rows(60, doc=lambda i: f"doc{i // 4}"))  # 15 sources of 4
    for seed in range(10):
        tasks = build(path, source="doc", seed=seed)
        sides = {t.source_id: {u.split for u in tasks if u.source_id == t.source_id} for t in tasks}
        assert all(len(s) == 1 for s in sides.values())
        train, val, test = sizes(tasks)
        assert train + val + test == 60 and train % 4 == val % 4 == test % 4 == 0 and min(train, val, test) > 0
        assert abs(test - 30) <= 4 and abs(train - 18) <= 4


def test_source_groups_of_unequal_size(tmp_path: Path) -> None:
    data = rows(30, src=lambda i: "big" if i < 12 else f"s{i}")
    tasks = build(write_jsonl(tmp_path / "t.jsonl", data), source="src")
    big = {t.split for t in tasks if t.source_id == "big"}
    assert len(big) == 1 and sum(t.source_id == "big" for t in tasks) == 12


def test_split_by_column(tmp_path: Path) -> None:
    names = ["train", "TRAIN", "dev", "validation", "test", "Test ", "testing"]
    path = write_jsonl(tmp_path / "t.jsonl", rows(7, part=lambda i: names[i]))
    tasks = build(path, split="part")
    assert sizes(tasks) == (2, 2, 3)
    assert [t.prompt for t in tasks if t.split == "val"] == ["What is 2 + 2?", "What is 3 + 3?"]


def test_a_split_column_and_a_ratio_are_refused_together(tmp_path: Path) -> None:
    with pytest.raises(FileTasksError, match=r"ratio: not used when `split` names a column"):
        FilesBenchmark(path="x.jsonl", split="part", ratio=[1, 1, 1])


def test_split_column_that_puts_a_source_on_both_sides(tmp_path: Path) -> None:
    data = [{"input": "a", "answer": "1", "part": "train", "src": "s1"},
            {"input": "b", "answer": "2", "part": "val", "src": "s2"},
            {"input": "c", "answer": "3", "part": "test", "src": "s1"}]
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:3: source 's1' is in test and in train \(t\.jsonl:1\); "
                                             r"all tasks of one source must be on one side$"):
        build(write_jsonl(tmp_path / "t.jsonl", data), split="part", source="src")


def test_a_bad_split_value(tmp_path: Path) -> None:
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:2: split 'holdout' is not train, val or test"):
        build(write_jsonl(tmp_path / "t.jsonl", rows(3, part=lambda i: ["train", "holdout", "test"][i])),
              split="part")


@pytest.mark.parametrize(("n", "params", "message"), [
    (2, {}, r"^split 'val' is empty \(2 tasks in 2 sources, ratio \[0\.3, 0\.2, 0\.5\] seed 0: train 1, val 0, "
            r"test 1\); add rows or sources, change the ratio, or use a split column$"),
    (20, {"ratio": [0.5, 0, 0.5]}, r"^split 'val' is empty"),
    (3, {"split": "part"}, r"^split 'val' is empty \(3 tasks in 3 sources, split column 'part': train 3, val 0, "),
    (8, {"source": "one"}, r"^split 'train' is empty \(8 tasks in 1 source, "),
])
def test_an_empty_split(tmp_path: Path, n: int, params: dict[str, Any], message: str) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", rows(n, part=lambda i: "train", one=lambda i: "same"))
    with pytest.raises(FileTasksError, match=message):
        build(path, **params)


def test_limit(tmp_path: Path) -> None:
    bench = FilesBenchmark(path=str(write_jsonl(tmp_path / "t.jsonl", rows(50))), limit=10)
    assert len(bench.build()) == 10 and bench.info()["rows"] == 10


# --- errors ----------------------------------------------------------------------------------------------------------


def test_a_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileTasksError, match=r"^benchmark\.params\.path: no such file 'nope\.jsonl' \(relative paths "
                                             r"resolve against the current directory .+\)$"):
        build(Path("nope.jsonl"))
    with pytest.raises(FileTasksError, match=r"^benchmark\.params\.path: no such file '/nope/x\.jsonl'$"):
        build(Path("/nope/x.jsonl"))
    with pytest.raises(FileTasksError, match=r"^benchmark\.params\.path: required"):
        FilesBenchmark().build()


def test_relative_paths_resolve_against_the_current_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_jsonl(tmp_path / "t.jsonl", rows(5))
    monkeypatch.chdir(tmp_path)
    assert len(build(Path("t.jsonl"))) == 5


def test_a_bad_json_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"input": "a", "answer": "1"}\n\n{"input": "b", "answer": 2,}\n')
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:3: not valid JSON \(Expecting property name enclosed in "
                                             r"double quotes at column 28\)$"):
        build(path)
    path.write_text('{"input": "a", "answer": "1"}\n[1, 2]\n')
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:2: expected a JSON object per line, got a list$"):
        build(path)


def test_a_missing_column_names_the_columns_present(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"question": "a", "gold": "1"}])
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:1: no column 'input' \(benchmark\.params\.input; "
                                             r"columns: question, gold\)$"):
        build(path)
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:1: no column 'answer' \(benchmark\.params\.answer"):
        build(path, input="question")
    with pytest.raises(FileTasksError, match=r"no column 'grp' \(benchmark\.params\.source"):
        build(path, input="question", answer="gold", source="grp")


def test_empty_cells_and_unusable_answers(tmp_path: Path) -> None:
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:2: empty answer \(column 'answer'\)$"):
        build(write_jsonl(tmp_path / "t.jsonl", [{"input": "a", "answer": "1"}, {"input": "b", "answer": None}]))
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:1: empty input"):
        build(write_jsonl(tmp_path / "t.jsonl", [{"input": " ", "answer": "1"}]))
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:2: answer 'many' holds no number \(grader numeric\)$"):
        build(write_jsonl(tmp_path / "t.jsonl", [{"input": "a", "answer": "1"}, {"input": "b", "answer": "many"}]),
              grader="numeric")
    with pytest.raises(FileTasksError, match=r"^t\.jsonl:1: answer 'Berlin' is neither a letter A–B nor one of"):
        build(write_jsonl(tmp_path / "t.jsonl", [{"input": "a", "answer": "Berlin", "choices": ["x", "y"]}]),
              grader="choice")


def test_other_file_errors(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "t.txt", rows(3))
    with pytest.raises(FileTasksError, match=r"cannot tell the format of 't\.txt' from its suffix"):
        build(tmp_path / "t.txt")
    assert len(build(tmp_path / "t.txt", format="jsonl", ratio=[1, 1, 1])) == 3
    with pytest.raises(FileTasksError, match=r"format: 'xml' is not one of jsonl, json, csv, tsv, hf"):
        build(tmp_path / "t.txt", format="xml")
    with pytest.raises(FileTasksError, match=r"format hf needs a directory written by save_to_disk"):
        build(tmp_path / "t.txt", format="hf")
    with pytest.raises(FileTasksError, match=r"is a directory, not a jsonl file"):
        build(tmp_path, format="jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(FileTasksError, match=r"^empty\.jsonl: no rows$"):
        build(tmp_path / "empty.jsonl")
    (tmp_path / "latin.csv").write_bytes("input,answer\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(FileTasksError, match=r"^latin\.csv: not UTF-8 text"):
        build(tmp_path / "latin.csv")
    (tmp_path / "obj.json").write_text('{"input": "a"}')
    with pytest.raises(FileTasksError, match=r"^obj\.json: the top level is an object, not a list of records; set "):
        build(tmp_path / "obj.json")


@pytest.mark.parametrize(("params", "message"), [
    ({"ratio": [0.5, 0.5]}, r"ratio: expected three non-negative numbers"),
    ({"ratio": [1, -1, 1]}, r"ratio: expected three non-negative numbers"),
    ({"ratio": [0, 0, 0]}, r"ratio: the three shares sum to 0"),
    ({"tolerance": -1.0, "grader": "numeric"}, r"tolerance: must be at least 0"),
    ({"grader": "exact", "tolerance": 0.1}, r"tolerance: applies to the numeric grader, not 'exact'"),
])
def test_bad_params_are_one_line(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError, match=message):
        FilesBenchmark(path="x.jsonl", **params)


@pytest.mark.parametrize(("params", "message"), [
    ({"pth": "x.jsonl"}, r"unknown param 'pth' — did you mean 'path'\?"),
    ({"seed": "zero"}, r"files\)\.seed: must be an integer \(got 'zero'\)"),
    ({"ratio": "0.3,0.2,0.5"}, r"ratio: must be a list"),
    ({"tolerance": "0.1"}, r"tolerance: must be a number \(got '0.1'\)"),
])
def test_unknown_and_ill_typed_params_are_refused_by_the_spec_check(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError, match=message):
        FilesBenchmark.check_params(params)


def test_info_carries_the_file_digest_and_sizes(tmp_path: Path) -> None:
    bench = FilesBenchmark(path=str(write_jsonl(tmp_path / "t.jsonl", rows(20))), grader="numeric")
    bench.build()
    info = bench.info()
    assert info["name"] == "files" and info["grader"] == "numeric" and info["parse"] == "answer"
    assert info["sizes"] == {"train": 6, "val": 4, "test": 10} and len(info["sha256"]) == 64
    json.dumps(info)


def test_grade_and_reveal(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", rows(3))
    quiet = FilesBenchmark(path=str(path), ratio=[1, 1, 1], grader="numeric")
    loud = FilesBenchmark(path=str(path), ratio=[1, 1, 1], grader="numeric", reveal=True)
    task = quiet.build()[0]
    loud.build()
    wrong = f"Answer: {int(task.reference) + 1}"
    assert task.reference not in quiet.grade(task, quiet.parse(wrong).answer).message.replace(wrong[8:], "")
    assert loud.grade(task, loud.parse(wrong).answer).message.endswith(f"The expected answer is '{task.reference}'.")
    assert loud.grade(task, None).message.startswith("No number was found")
    assert quiet.grade(task, quiet.parse(f"Answer: {task.reference}").answer).message == "Correct."


def test_system_prompt_and_solver_params(tmp_path: Path) -> None:
    path = str(write_jsonl(tmp_path / "t.jsonl", rows(3)))
    bench = FilesBenchmark(path=path, system="Be brief.", max_tokens=32, temperature=0.7)
    assert bench.system_prompt() == "Be brief.\n"
    assert (bench.solver_params().max_tokens, bench.solver_params().temperature) == (32, 0.7)
    assert "Answer:" in FilesBenchmark(path=path).system_prompt()


def test_the_spec_check_reads_no_file_but_finds_it_missing(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("not json at all\n")
    assert FilesBenchmark.check_params({"path": str(path)}).path == str(path)  # the rows are read by build()
    with pytest.raises(ParamError, match=r"no such file"):
        FilesBenchmark.check_params({"path": str(tmp_path / "nope.jsonl")})
    with pytest.raises(ParamError, match=r"tolerance: applies to the numeric grader"):
        FilesBenchmark.check_params({"path": str(path), "tolerance": 0.5})
