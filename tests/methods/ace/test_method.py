"""ACE's update logic with scripted models (evidence: mechanism)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from evoarena.api import Attempt, Feedback, TaskView, policy
from evoarena.benchmarks.arith.generator import family_of
from evoarena.harness import HarnessWorkspace, load_tree
from evoarena.methods.ace.method import PLAYBOOK, STATE, Ace, AceState, cited_ids
from evoarena.methods.ace.playbook import SECTIONS, extract_json, parse_playbook, render_playbook
from evoarena.models import GenParams, Message
from evoarena.protocol.boundary.client import StepContext
from evoarena.protocol.run.runner import run_experiment
from evoarena.scripted.arith import RULES, arith_student
from evoarena.store import RunStore

REFLECTOR, CURATOR = "You are the ACE Reflector", "You are the ACE Curator"


def _question(text: str, marker: str) -> str:
    m = re.search(rf"^{marker}\s*\n?(.+)$", text, flags=re.M)
    return m.group(1).strip() if m else ""


def _reflection(text: str) -> str:
    rule = RULES[family_of(_question(text, "Question:"))]
    return json.dumps({"reasoning": "r", "error_identification": "e", "root_cause_analysis": "c",
                       "correct_approach": rule, "key_insight": rule,
                       "bullet_tags": [{"id": "com-00001", "tag": "helpful"}]})


@policy("test-ace")
def ace_policy(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if REFLECTOR in text:
        return f"Here is my analysis:\n```json\n{_reflection(text)}\n```"
    if CURATOR in text:
        rule = RULES[family_of(_question(text, "Question context:"))]
        ops = [{"type": "ADD", "section": "common_mistakes", "content": rule},
               {"type": "ADD", "section": "made-up section", "content": "Check units."},
               {"type": "ADD", "section": "others", "content": "   "},
               {"type": "UPDATE", "section": "others", "content": "SHOULD NOT APPEAR"},
               {"type": "DELETE", "section": "common mistakes", "content": "com-00001"}]
        return "Sure. " + json.dumps({"reasoning": "new rule", "operations": ops}) + " Done."
    return arith_student(messages, params)


@policy("test-ace-bad-curator")
def bad_curator(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if REFLECTOR in text:
        return _reflection(text)
    if CURATOR in text:
        return '{"reasoning": "oops", "operations": [{"type": "ADD", "content": "x"}'  # unbalanced
    return arith_student(messages, params)



def ace_spec(make_spec: Any, policy: str, **params: Any) -> Any:
    return make_spec(methods=[{"name": "ace", "params": params}],
                     models={"s": {"backend": "scripted", "model": policy}},
                     roles={"solver": "s", "reflector": "s", "curator": "s"})


def final_tree(run_dir: Path) -> dict[str, str]:
    store = RunStore(run_dir)
    return load_tree(store, store.cells()[0]["current_version"])


def test_only_well_formed_adds_are_applied_and_ids_increase(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(ace_spec(make_spec, "test-ace"), tmp_path / "run")
    tree = final_tree(tmp_path / "run")
    pb = parse_playbook(tree[PLAYBOOK])
    bullets = pb.bullets()
    assert bullets and "SHOULD NOT APPEAR" not in tree[PLAYBOOK]
    assert {b.content for b in pb.sections["common mistakes"]} <= set(RULES.values())
    assert pb.sections["others"] and all(b.content == "Check units." for b in pb.sections["others"])
    assert all(not pb.sections[s] for s in SECTIONS if s not in ("common mistakes", "others"))
    # 5-digit ids from one global counter, increasing in the order they were added
    assert all(re.fullmatch(r"[a-z]+-\d{5}", b.id) for b in bullets)
    numbers = sorted(b.number for b in bullets)
    assert numbers == list(range(1, len(bullets) + 1))
    for section in pb.sections.values():
        assert [b.number for b in section] == sorted(b.number for b in section)
    assert json.loads(tree[STATE])["next_id"] == len(bullets) + 1
    assert pb.sections["common mistakes"][0].id == "com-00001" and pb.sections["others"][0].id == "oth-00002"
    # the reflector keeps tagging com-00001 helpful once it exists (DELETE was ignored)
    assert pb.sections["common mistakes"][0].helpful >= 1


def test_malformed_curator_output_is_rejected_and_playbook_unchanged(tmp_path: Path, make_spec: Any) -> None:
    run_experiment(ace_spec(make_spec, "test-ace-bad-curator"), tmp_path / "run")
    tree = final_tree(tmp_path / "run")
    assert tree[PLAYBOOK] == render_playbook(parse_playbook(""))
    assert not parse_playbook(tree[PLAYBOOK]).bullets()
    events = RunStore(tmp_path / "run").query("SELECT payload FROM events WHERE kind='rejected_output'")
    payloads = [json.loads(e["payload"]) for e in events]
    assert payloads and all(p["what"] == "ace_curation" and p["reason"] for p in payloads)


# -- one practice step with a fake context ------------------------------------------------------------------------

SEEDED = ("## COMMON MISTAKES\n[com-00001] helpful=0 harmful=0 :: a\n[com-00002] helpful=2 harmful=0 :: b\n"
          "## OTHERS\n[oth-00003] helpful=1 harmful=1 :: c\n")


class FakeCtx:
    ask = StepContext.ask  # the real `ask`, over this fake's model(), reject() and update_note

    def __init__(self, root: Path, reply: Callable[[str, str], str], passes: Callable[[int], bool],
                 solver_text: str = "5", attempt_limit: int | None = None) -> None:
        self.harness = HarnessWorkspace(root)
        self.update_note: str | None = "NOTE: be brief."
        self.attempt_limit = attempt_limit
        self.attempt_rows: list[dict[str, Any]] = []
        self.step, self.train = 0, ()
        self.prompts: list[tuple[str, str]] = []
        self.rejected: list[tuple[str, str]] = []
        self.kinds: list[str] = []
        self.trees: list[dict[str, str] | None] = []
        self.finish = "stop"  # every reply's finish reason
        self._reply, self._passes, self._solver_text = reply, passes, solver_text

    def solve(self, task: TaskView, *, tree: dict[str, str] | None = None, sample_index: int = 0) -> Attempt:
        return self._run(tree, "practice")

    def rollout(self, task: TaskView, *, tree: dict[str, str] | None = None, sample_index: int = 0) -> Attempt:
        return self._run(tree, "rollout")

    def _run(self, tree: dict[str, str] | None, phase: str) -> Attempt:
        self.attempt_rows.append({"phase": phase})
        self.trees.append(tree)
        return Attempt("t1", self._solver_text, "5", number=len(self.attempt_rows))

    def feedback(self, task: TaskView, attempt: Attempt) -> Feedback:
        ok = self._passes(attempt.number)
        return Feedback(float(ok), ok, "Correct." if ok else "The answer 5 is wrong.")

    def model(self, role: str) -> Any:
        def complete(messages: Sequence[Message], params: GenParams, sample_index: int = 0) -> Any:
            self.prompts.append((role, messages[-1].content))
            return SimpleNamespace(text=self._reply(role, messages[-1].content), finish_reason=self.finish)
        return SimpleNamespace(default_params=GenParams(), complete=complete)

    def label(self, task: TaskView) -> str:
        return "7"

    def reject(self, what: str, raw: str, reason: str, *, kind: str = "malformed", **_: Any) -> None:
        self.rejected.append((what, reason))
        self.kinds.append(kind)


TASK = TaskView("t1", "train", "s1", "What is 2 + 3?")
TAGS = [{"id": "com-00001", "tag": "helpful"}, {"id": "com-00002", "tag": "harmful"},
        {"id": "oth-00003", "tag": "neutral"}, {"id": "zzz-00099", "tag": "helpful"}]


def replies(role: str, prompt: str) -> str:
    if role == "reflector":
        return json.dumps({"key_insight": "add the numbers", "bullet_tags": TAGS})
    return json.dumps({"reasoning": "nothing new", "operations": []})


def make_ctx(tmp_path: Path, **kw: Any) -> FakeCtx:
    ctx = FakeCtx(tmp_path / "h", **kw)
    ctx.harness.write(PLAYBOOK, SEEDED)
    return ctx


def test_counters_update_from_reflector_tags_and_reflector_sees_only_cited(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, reply=replies, passes=lambda n: True,
                   solver_text='{"reasoning": "x", "bullet_ids": ["com-00002"], "final_answer": 5}')
    manifest = Ace().practice(ctx, TASK)  # type: ignore[arg-type]
    pb = parse_playbook(ctx.harness.read(PLAYBOOK))
    assert [(b.id, b.helpful, b.harmful) for b in pb.bullets()] == [
        ("com-00001", 1, 0), ("com-00002", 2, 1), ("oth-00003", 1, 1)]
    assert manifest is not None and "counter" in manifest.intent
    roles = [r for r, _ in ctx.prompts]
    assert roles == ["reflector", "curator"] and len(ctx.attempt_rows) == 1  # right: reflect once, no re-run
    reflect = ctx.prompts[0][1]
    assert reflect.startswith("NOTE: be brief.") and ctx.prompts[1][1].startswith("NOTE: be brief.")
    assert "[com-00002] helpful=2" in reflect and "com-00001]" not in reflect and "Ground truth" not in reflect
    assert "Token budget: 80000" in ctx.prompts[1][1]


def test_a_cut_off_reply_is_adopted_when_its_json_parses(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, reply=replies, passes=lambda n: True)
    ctx.finish = "length"
    Ace().practice(ctx, TASK)  # type: ignore[arg-type]
    assert not ctx.rejected and parse_playbook(ctx.harness.read(PLAYBOOK)).find("com-00001").helpful == 1  # type: ignore[union-attr]
    bad = make_ctx(tmp_path / "b", reply=lambda role, prompt: "no json", passes=lambda n: True)
    bad.finish = "length"
    Ace().practice(bad, TASK)  # type: ignore[arg-type]
    assert bad.rejected == [("ace_reflection", "reflector output cut off at max_tokens"),
                            ("ace_curation", "no JSON object in output")]


def test_failures_rerun_up_to_max_rounds_with_the_reflection(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, reply=replies, passes=lambda n: False)
    Ace().practice(ctx, TASK)  # type: ignore[arg-type]
    assert len(ctx.attempt_rows) == 4 and [r for r, _ in ctx.prompts] == ["reflector"] * 3 + ["curator"]
    rerun = ctx.trees[1]
    assert rerun is not None and "add the numbers" in Ace().context(rerun, TASK)
    assert not ctx.harness.exists("memory/ace_reflection.md")
    ctx2 = make_ctx(tmp_path / "b", reply=replies, passes=lambda n: n >= 2)
    Ace(use_ground_truth=True).practice(ctx2, TASK)  # type: ignore[arg-type]
    assert len(ctx2.attempt_rows) == 2 and "Ground truth: 7" in ctx2.prompts[0][1]


def test_attempt_limit_one_submits_once_and_regenerates_as_rollouts(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, reply=replies, passes=lambda n: False, attempt_limit=1)
    Ace().practice(ctx, TASK)  # type: ignore[arg-type]
    assert [r["phase"] for r in ctx.attempt_rows] == ["practice", "rollout", "rollout", "rollout"]
    assert [r for r, _ in ctx.prompts] == ["reflector"] * 3 + ["curator"]
    assert parse_playbook(ctx.harness.read(PLAYBOOK)).find("com-00001").helpful == 3  # type: ignore[union-attr]


def test_malformed_reflector_output_is_rejected(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, reply=lambda role, p: "no json here" if role == "reflector" else replies(role, p),
                   passes=lambda n: False)
    assert Ace().practice(ctx, TASK) is None  # type: ignore[arg-type]
    assert ctx.rejected == [("ace_reflection", "no JSON object in output")]
    assert ctx.harness.read(PLAYBOOK) == render_playbook(parse_playbook(SEEDED))


def test_cited_ids_from_the_closing_line_or_json() -> None:
    assert cited_ids("5\nBullets used: [com-00002], [oth-00003]") == ["com-00002", "oth-00003"]
    assert cited_ids('{"bullet_ids": ["str-00001"], "final_answer": 5}') == ["str-00001"]
    assert cited_ids("5") == []
    assert "Bullets used:" in Ace().context({PLAYBOOK: SEEDED}, TASK)
    assert "Bullets used:" not in Ace().context({PLAYBOOK: render_playbook(parse_playbook(""))}, TASK)


def test_json_extraction_order() -> None:
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('text ```json\n{"a": 2}\n``` more {"a": 3}') == {"a": 2}
    assert extract_json('say {"a": {"b": "}"}} end') == {"a": {"b": "}"}}
    assert extract_json("{not json") is None


def test_the_state_file_is_one_compact_line_and_reads_back() -> None:
    assert AceState().text() == '{"next_id": 1}\n' and AceState(next_id=12).text() == '{"next_id": 12}\n'
    assert AceState.model_validate_json(AceState(next_id=12).text()) == AceState(next_id=12)


def curating(*contents: str) -> Any:
    ops = [{"type": "ADD", "section": "common mistakes", "content": c} for c in contents]
    return lambda role, prompt: replies(role, prompt) if role == "reflector" else json.dumps({"operations": ops})


def test_flawed_curations_and_reflections_are_rejected_with_their_kind(tmp_path: Path) -> None:
    template = ("Identify only the NEW insights in the reflection below that are missing from the current playbook, "
                "and add them as concise, actionable bullets.")  # the curator template's own words, as the 1.5B wrote
    same = "Always double-check the count before answering."
    asks = lambda role, prompt: json.dumps({"key_insight": "Certainly! Please provide the inputs for the task."})  # noqa: E731
    cases: list[tuple[Any, list[str], int]] = [  # (replies, kinds rejected, bullets added to the 3 seeded)
        (curating(template), ["echo"], 0),
        (curating(*[same] * 8), ["repeated"], 0),  # a playbook of one sentence repeated: the curation is refused
        (curating(same, same, "c"), ["repeated", "repeated"], 1),  # a repeat and a bullet it has ("c"): dropped
        (asks, ["refused", "malformed"], 0),  # the reflector asks for input; the same reply has no operations
        (curating("Subtract what is given away; add what is bought."), [], 1),
        (curating(same, "Count every item to the end of the list."), [], 2),
    ]
    for i, (reply, kinds, added) in enumerate(cases):
        ctx = make_ctx(tmp_path / str(i), reply=reply, passes=lambda n: True)
        Ace().practice(ctx, TASK)  # type: ignore[arg-type]
        assert ctx.kinds == kinds, i
        assert len(parse_playbook(ctx.harness.read(PLAYBOOK)).bullets()) == 3 + added, i
