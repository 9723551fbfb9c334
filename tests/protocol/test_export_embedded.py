"""The exported prompt on the real Qwen2.5-Coder-0.5B-Instruct: with a test task in its slot it is the identical
request the run's test attempt made, so it hits the run's response cache and gives the same answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evoarena.models import ResponseCache, RoleModel, build_backend
from evoarena.models.cache import call_key
from evoarena.protocol import catalog
from evoarena.protocol.export.bundle import export
from evoarena.protocol.export.prompt_file import load_prompt
from evoarena.protocol.run.runner import run_experiment
from evoarena.store import RunStore, attempt_conversation

pytestmark = pytest.mark.embedded


def test_an_exported_prompt_hits_the_runs_cache_on_the_small_instruct_model(tmp_path: Path, make_spec: Any) -> None:
    spec = make_spec(
        benchmark={"name": "arith", "params": {"seed": 0, "n_train": 3, "n_val": 2, "n_test": 3}},
        methods=[{"name": "bootstrap_fewshot", "params": {"max_labeled_demos": 2}}],
        models={"small": {"backend": "embedded", "model": "qwen2.5-coder-0.5b-instruct"}},
        roles={"solver": "small"},
    )
    run_experiment(spec, tmp_path / "run")
    export(tmp_path / "run", tmp_path / "prompt", "prompt")
    template = load_prompt(tmp_path / "prompt")
    assert "Q: {task}\nA:" in template.messages[-1].content
    store = RunStore(tmp_path / "run")
    tasks = {t.id: t for t in catalog.benchmark_class("arith")(**spec.benchmark.params).build() if t.split == "test"}
    backend = build_backend(spec.models["small"])
    replay = RoleModel(role="solver", model_name="small", backend=backend, spec=spec.models["small"],
                       store=RunStore(tmp_path / "replay"), cache=ResponseCache())
    rows = store.query("SELECT id, task_id, output_blob FROM attempts WHERE phase='test'")
    assert len(rows) == 3
    for row in rows:
        messages = template.render(tasks[row["task_id"]].prompt)
        conv = attempt_conversation(store, int(row["id"]))
        assert conv is not None and conv.messages is not None
        assert [(m.role, m.content) for m in messages] == [(m.role, m.content) for m in conv.messages]
        assert call_key(backend, template.params, messages, 0) == conv.call.cache_key
        assert replay.complete(messages, template.params).text == store.blobs.get_text(row["output_blob"])
    replayed = replay.store.query("SELECT cached, model_id FROM calls")
    assert len(replayed) == 3 and all(r["cached"] and r["model_id"] == backend.model_id for r in replayed)
