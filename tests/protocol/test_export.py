"""`evoarena export` on scripted runs: the exported prompt loads back and, with a test task put in its slot, is the
very request the run's test attempt sent (same messages, same cache key, same answer); files equal a checkout;
skills of ACE and SkillProx are valid Agent Skills folders; errors are one line and write nothing."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from evoarena.api import Manifest, Method, PracticeContext, TaskView
from evoarena.harness import load_tree
from evoarena.models import ResponseCache, RoleModel, build_backend
from evoarena.models.cache import call_key
from evoarena.protocol import catalog
from evoarena.protocol.export.bundle import (
    ExportError,
    ExportSource,
    export,
    open_source,
    pick_best,
    prompt_template,
    summary,
)
from evoarena.protocol.export.prompt_file import PromptFileError, PromptTemplate, load_prompt
from evoarena.protocol.run.runner import run_experiment
from evoarena.spec import ExperimentSpec, MethodSpec, load_spec, parse_spec
from evoarena.store import RunStore, attempt_conversation

RECIPE = Path(__file__).resolve().parents[2] / "recipes" / "arith-basics.yaml"
CELLS = ("frozen__scripted__s0", "reflexion__scripted__s0", "bootstrap_fewshot__scripted__s0")


@pytest.fixture(scope="module")
def arith_basics(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ExperimentSpec, Path]:
    root = tmp_path_factory.mktemp("export")
    spec = load_spec(RECIPE).with_model("scripted")
    run_experiment(spec, root / "run", cache=ResponseCache(root / "responses.sqlite"))
    return root / "run", spec, root / "responses.sqlite"


def _test_tasks(spec: ExperimentSpec) -> dict[str, Any]:
    bench = catalog.benchmark_class(spec.benchmark.name)(**spec.benchmark.params)
    return {t.id: t for t in bench.build() if t.split == "test"}


@pytest.mark.parametrize("cell", CELLS)
def test_the_exported_prompt_is_the_request_of_every_test_attempt(
    cell: str, arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path
) -> None:
    run_dir, spec, cache_path = arith_basics
    source = export(run_dir, tmp_path / "p", "prompt", cell=cell)
    template = load_prompt(tmp_path / "p")
    assert template == load_prompt(tmp_path / "p" / "prompt.json")
    assert "{task}" in (tmp_path / "p" / "prompt.txt").read_text()
    assert template.source["version"] == source.version and template.source["version_is"] == "selected"
    store = RunStore(run_dir)
    assert source.version == next(c["selected_version"] for c in store.cells() if c["cell"] == cell)
    backend = build_backend(spec.models["scripted"], catalog.policy)
    replay = RoleModel(role="solver", model_name="scripted", backend=backend, spec=spec.models["scripted"],
                       store=RunStore(tmp_path / "replay"), cache=ResponseCache(cache_path))
    tasks = _test_tasks(spec)
    rows = store.query("SELECT id, task_id, answer, output_blob FROM attempts WHERE cell=? AND phase='test'", [cell])
    assert len(rows) == len(tasks) == 40
    for row in rows:
        messages = template.render(tasks[row["task_id"]].prompt)
        conv = attempt_conversation(store, int(row["id"]))
        assert conv is not None and conv.messages is not None
        assert [(m.role, m.content) for m in messages] == [(m.role, m.content) for m in conv.messages]
        assert call_key(backend, template.params, messages, 0) == conv.call.cache_key
        text = store.blobs.get_text(row["output_blob"])
        assert backend.complete(messages, template.params).text == text  # the model itself, uncached
        hit = replay.complete(messages, template.params)  # and the run's cached response, as the ledger says
        assert hit.text == text and catalog.benchmark_class("arith")().parse(text).answer == row["answer"]
    assert all(bool(r["cached"]) for r in replay.store.query("SELECT cached FROM calls"))


def test_prompt_slot_and_demos(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path) -> None:
    run_dir, _, _ = arith_basics
    export(run_dir, tmp_path / "p", "prompt", cell="bootstrap")
    t = load_prompt(tmp_path / "p")
    assert t.messages[-1].content.endswith("Q: {task}\nA:") and t.messages[-1].content.count("Q: ") > 1
    assert t.params.seed == 0 and t.params.max_tokens == 12 and t.model["backend"] == "scripted"
    assert t.render("1 + 1 =")[-1].content.endswith("Q: 1 + 1 =\nA:")
    assert PromptTemplate.from_file_form(t.file_form()) == t


def test_files_export_equals_checkout(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evoarena.cli import app

    run_dir, _, _ = arith_basics
    source = export(run_dir, tmp_path / "files", "files", cell="reflexion", version="final")
    store = RunStore(run_dir)
    assert source.version == next(c["current_version"] for c in store.cells() if c["cell"].startswith("reflexion"))
    result = CliRunner().invoke(app, ["checkout", str(run_dir), source.version, str(tmp_path / "co")])
    assert result.exit_code == 0, result.output
    files = {p.relative_to(tmp_path / "files").as_posix(): p.read_text() for p in (tmp_path / "files").rglob("*")
             if p.is_file()}
    checked = {p.relative_to(tmp_path / "co").as_posix(): p.read_text() for p in (tmp_path / "co").rglob("*")
               if p.is_file()}
    assert files == checked == load_tree(store, source.version) and "memory/reflections.md" in files


def test_a_version_by_id_prefix(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path) -> None:
    run_dir, _, _ = arith_basics
    store = RunStore(run_dir)
    first = store.query("SELECT id FROM harness_versions WHERE cell=? ORDER BY rowid LIMIT 1", [CELLS[1]])[0]["id"]
    source = export(run_dir, tmp_path / "v", "files", cell=CELLS[1], version=first[:8])
    assert source.version == first and source.which == "id"
    assert "memory/reflections.md" not in {p.name for p in (tmp_path / "v").rglob("*")}


@pytest.mark.parametrize(("args", "message"), [
    ({"cell": None}, "this run has 3 cells; pass --cell (best, or one of: bootstrap_fewshot__scripted__s0, "),
    ({"cell": "nosuch"}, "no cell 'nosuch' in this run (cells: "),
    ({"cell": "reflxion"}, "no cell 'reflxion' in this run — did you mean 'reflexion'? (cells: "),
    ({"cell": "bset"}, "no cell 'bset' in this run — did you mean 'best'? (cells: "),
    ({"cell": "frozen", "version": "ffffffff"}, "no harness version 'ffffffff'"),
    ({"cell": "frozen", "version": "sel"}, "no harness version 'sel'"),
    ({"cell": "frozen", "mode": "skill"}, "frozen keeps no skill or playbook"),
    ({"cell": "frozen", "mode": "yaml"}, "--as 'yaml': expected one of prompt, files, skill"),
])
def test_errors_are_one_line_and_write_nothing(
    args: dict[str, Any], message: str, arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path
) -> None:
    run_dir, _, _ = arith_basics
    mode = args.pop("mode", "prompt")
    with pytest.raises(ExportError) as err:
        export(run_dir, tmp_path / "out", mode, **args)
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_version_of_another_cell_is_refused(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path) -> None:
    run_dir, _, _ = arith_basics
    store = RunStore(run_dir)
    other = next(c["current_version"] for c in store.cells() if c["cell"] == CELLS[1])
    with pytest.raises(ExportError, match="is not a version of cell frozen"):
        export(run_dir, tmp_path / "out", "files", cell="frozen", version=other)


def test_an_existing_dest_needs_force(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path) -> None:
    run_dir, _, _ = arith_basics
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine.txt").write_text("keep")
    with pytest.raises(ExportError, match="already holds files"):
        export(run_dir, dest, "files", cell="frozen")
    assert sorted(p.name for p in dest.iterdir()) == ["mine.txt"]
    export(run_dir, dest, "files", cell="frozen", force=True)
    assert (dest / "mine.txt").read_text() == "keep" and (dest / "system.md").is_file()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ExportError, match="is not a directory"):
        export(run_dir, tmp_path / "afile", "files", cell="frozen")


def test_load_prompt_refuses_other_files(tmp_path: Path) -> None:
    (tmp_path / "prompt.json").write_text(json.dumps({"messages": []}))
    with pytest.raises(PromptFileError, match="not an evoarena prompt file"):
        load_prompt(tmp_path)
    with pytest.raises(PromptFileError):
        load_prompt(tmp_path / "absent.json")


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def _check_skill(dest: Path, method: str) -> tuple[dict[str, Any], str]:
    front, body = _front_matter((dest / "SKILL.md").read_text())
    assert set(front) == {"name", "description"}
    assert front["name"].replace("-", "").isalnum() and front["name"] == front["name"].lower()
    assert len(front["name"]) <= 64 and 0 < len(front["description"]) <= 1024
    assert method in front["description"] and "evidence: mechanism" in front["description"]
    about = json.loads((dest / "evoarena-export.json").read_text())
    assert about["method"] == method and about["version"][:12] in front["description"]
    return front, body


def test_skill_of_an_ace_run(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "export-ace", "benchmark": {"name": "clr", "params": {"chains": 1, "layers": 2}},
        "methods": [{"name": "ace"}], "models": {"s": {"backend": "scripted", "model": "clr-student"}},
        "roles": {"solver": "s", "reflector": "s", "curator": "s"},
    })
    run_experiment(spec, tmp_path / "run")
    with pytest.raises(ExportError, match="no selected version"):  # a curriculum cell deploys no single version
        export(tmp_path / "run", tmp_path / "sk", "skill")
    source = export(tmp_path / "run", tmp_path / "sk", "skill", version="final")
    front, body = _check_skill(tmp_path / "sk", "ace")
    assert front["name"] == "clr-ace" and "clr benchmark" in front["description"]
    playbook = source.tree["memory/playbook.md"]
    bullets = [ln.split(" :: ", 1)[1] for ln in playbook.splitlines() if " :: " in ln]
    assert bullets and all(f"- {b} (" in body for b in bullets)
    assert "## Task instructions it was evolved with" in body


def test_skill_of_a_skillprox_run(tmp_path: Path) -> None:
    spec = parse_spec({
        "name": "export-skillprox", "benchmark": {"name": "sheets", "params": {"seed": 0, "tasks": 24,
                                                                               "ratio": [10, 6, 8]}},
        "methods": [{"name": "skillprox", "params": {"iterations": 2, "batch_size": 4, "val_size": 6}}],
        "models": {"s": {"backend": "scripted", "model": "sheets-student"}},
        "roles": {"solver": "s", "diagnoser": "s", "patcher": "s", "shrinker": "s"},
        "protocol": {"select": "last"},
    })
    run_experiment(spec, tmp_path / "run")
    source = export(tmp_path / "run", tmp_path / "sk", "skill")
    front, body = _check_skill(tmp_path / "sk", "skillprox")
    skill = {p[len("skills/skillprox/"):]: t for p, t in source.tree.items() if p.startswith("skills/skillprox/")}
    _, main_body = skill["SKILL.md"].split("\n---\n", 1)
    assert main_body.strip() in body
    refs = {p.relative_to(tmp_path / "sk").as_posix() for p in (tmp_path / "sk").rglob("references/*.md")}
    assert refs <= {p for p in skill if p.startswith("references/")}
    assert all(f"]({r})" in body or f"](./{r})" in body for r in refs)


class _ById(Method):
    """A method whose context names the task's id: no single template can show it."""

    name = "test-export-by-id"

    def context(self, tree: Mapping[str, str], task: TaskView) -> str:
        return f"(notes for {task.id})"

    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        return None


def _source_with(arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path, tree: dict[str, str]) -> ExportSource:
    return replace(open_source(arith_basics[0], cell="frozen"), tree=tree)


def test_per_task_and_id_dependent_contexts_are_refused(
    arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path
) -> None:
    source = _source_with(arith_basics, tmp_path, {"system.md": "Answer."})
    arith = catalog.benchmark_class("arith")()
    with pytest.raises(ExportError, match="reasoning_bank chooses its context per task"):
        prompt_template(replace(source, method_spec=MethodSpec(name="reasoning_bank")),
                        catalog.method_class("reasoning_bank")(retriever="lexical"), arith)
    with pytest.raises(ExportError, match="context depends on the task's id"):
        prompt_template(source, _ById(), arith)


def test_a_harness_that_mentions_the_slot_gets_a_longer_one(
    arith_basics: tuple[Path, ExperimentSpec, Path], tmp_path: Path
) -> None:
    source = _source_with(arith_basics, tmp_path, {"system.md": "Read {task} carefully."})
    t = prompt_template(source, catalog.method_class("frozen")(), catalog.benchmark_class("arith")())
    assert t.slot == "{{task}}" and t.messages[0].content == "Read {task} carefully."
    assert t.render("2 + 2 =")[-1].content == "Q: 2 + 2 =\nA:" and t.render("x")[0].content == "Read {task} carefully."


def test_cell_best_is_the_condition_with_the_best_val(arith_basics: tuple[Path, ExperimentSpec, Path],
                                                      tmp_path: Path) -> None:
    from evoarena.store.scores import version_scores

    run_dir, _, _ = arith_basics
    store = RunStore(run_dir)
    vals = {c["cell"]: version_scores(store, c["cell"], c["selected_version"])[0].mean for c in store.cells()}
    source = export(run_dir, tmp_path / "best", "files", cell="best")
    assert vals[source.cell] == max(vals.values()) and list(vals.values()).count(max(vals.values())) == 1
    assert source.which == "selected" and source.chosen_by == "best val"
    assert source.version == next(c["selected_version"] for c in store.cells() if c["cell"] == source.cell)
    assert "(selected, the best val; val 1.000" in summary(source)


def test_best_ties_go_to_the_spec_order_and_seeds_average() -> None:
    def row(condition: str, seed: int) -> dict[str, Any]:
        return {"cell": f"{condition}__m__s{seed}", "condition": condition, "seed": seed}

    spec_order, seeds = ["frozen", "gepa", "ace"], [3, 1]
    tie = [(row("ace", 3), 0.5), (row("gepa", 3), 0.5), (row("frozen", 3), 0.25)]
    assert pick_best(tie, spec_order, seeds)["condition"] == "gepa"
    assert pick_best(list(reversed(tie)), spec_order, seeds)["condition"] == "gepa"
    # gepa's best seed beats ace's, but ace's mean over its seeds is higher; within ace, the seeds tie: 3 is first
    spread = [(row("gepa", 3), 1.0), (row("gepa", 1), 0.0), (row("ace", 1), 0.75), (row("ace", 3), 0.75)]
    assert pick_best(spread, spec_order, seeds)["cell"] == "ace__m__s3"
