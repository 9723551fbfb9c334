"""The scripted players of AHE's evolve agent, Autogenesis's and Meta-Harness's proposer, EvoTest's TextWorld evolver
and the humaneval repairer (evidence: mechanism): each reads the prompt its method renders (the templates named in
each test) and answers in the form that method's own parser adopts; a prompt that shows no new lesson gets the reply
a weak model would give."""

from __future__ import annotations

from evoarena.benchmarks.humaneval.mutate import mutations
from evoarena.benchmarks.humaneval.problems import problems
from evoarena.methods.ahe.method import Ahe
from evoarena.methods.ahe.reply import parse_reply as ahe_parse
from evoarena.methods.autogenesis import method as ag_method
from evoarena.methods.evotest import method as evotest_method
from evoarena.methods.evotest.reply import parse_reply as evotest_parse
from evoarena.methods.jsonparse import first_json, whole_and_fenced
from evoarena.methods.meta_harness import method as mh_method
from evoarena.methods.meta_harness.history import traces_text
from evoarena.methods.meta_harness.tools import final_candidates, parse_call
from evoarena.methods.prompting import render_prompt
from evoarena.methods.replies import parse_instruction
from evoarena.models import GenParams, Message
from evoarena.scripted.arith import RULES, arith_student
from evoarena.scripted.humaneval_repair import CHECKS, checklist, humaneval_repairer, recognised
from evoarena.scripted.jitrl_textworld import guided, jitrl_textworld
from evoarena.scripted.labels_learner import cue_lines, labels_learner

SUB = "Sam had 9 apples and gave away 4. How many apples does Sam have left?"
MUL = "There are 3 boxes with 2 pens in each. How many pens are there in total?"
ADD = "Tom has 2 cards and gets 3 more. How many cards does Tom have now?"


def _ask(prompt: str, system: str = "") -> str:
    return arith_student([*([Message("system", system)] if system else []), Message("user", prompt)], GenParams())


# -- AHE ------------------------------------------------------------------------------------------------------------
def _evolve_prompt(components: list[str], base: dict[str, str]) -> str:
    failures = [{"id": "train-000", "task": SUB, "output": "13", "feedback": "The answer 13 is wrong."},
                {"id": "train-001", "task": MUL, "output": "5", "feedback": "The answer 5 is wrong."}]
    return Ahe(components=components).evolve_prompt(1, {"train-000": "fail", "train-001": "fail", "train-002": "pass"},
                                                    failures, None, [], base)


def test_ahes_evolver_writes_each_failed_familys_rule_as_a_skill_that_ahe_adopts() -> None:
    """ahe/prompts/evolve.md: a ```json object with `changes` (id, type, files, predicted_fixes, …) and `files` (the
    whole new text of every path edited); ahe/reply.py adopts each change that edits an editable file."""
    base = {"system.md": "Solve it.\n"}
    proposal = ahe_parse(_ask(_evolve_prompt(["all"], base)), components=Ahe(components=["all"]).components,
                         current=base, snapshot=None, iteration=1)
    assert proposal.refused == ()
    assert [c.predicted_fixes for c in proposal.manifest.changes] == [("train-000",), ("train-001",)]
    written = [text for edit in proposal.edits for path, text in edit.items() if path.startswith("skills/")]
    assert written == [RULES["sub"] + "\n", RULES["mul"] + "\n"]


def test_ahes_prompt_only_evolver_puts_both_rules_in_one_change_of_the_system_prompt() -> None:
    base = {"system.md": "Solve it.\n"}
    proposal = ahe_parse(_ask(_evolve_prompt(["prompt"], base)), components=["system.md"], current=base,
                         snapshot=None, iteration=1)
    assert [c.files for c in proposal.manifest.changes] == [("system.md",)]
    assert proposal.edits[0]["system.md"] == f"Solve it.\n- {RULES['sub']}\n- {RULES['mul']}\n"


def test_ahes_evolver_manifest_survives_a_harness_that_holds_a_code_fence() -> None:
    """A file holding ``` (humaneval's system prompt) must not end the ```json block early: the policy escapes
    backticks in its JSON strings (recipes/ahe-repair.yaml's prompt-only arm)."""
    base = {"system.md": "Reply in one ```python code block.\n"}
    proposal = ahe_parse(_ask(_evolve_prompt(["prompt"], base)), components=["system.md"], current=base,
                         snapshot=None, iteration=1)
    assert proposal.edits[0]["system.md"].startswith("Reply in one ```python code block.\n- ")


def test_ahes_evolver_leaves_a_harness_that_holds_the_rules_as_it_is() -> None:
    """evolve.md: `Reply {"changes": [], "files": {}} to leave the harness as it is.`"""
    base = {"system.md": f"Solve it.\n{RULES['sub']}\n{RULES['mul']}\n"}
    assert first_json(whole_and_fenced(_ask(_evolve_prompt(["all"], base))), dict) == {"changes": [], "files": {}}


# -- Autogenesis ----------------------------------------------------------------------------------------------------
def _reflect(learnable_memory: bool, passed: bool = False, memory: str = "") -> str:
    shown = [{"name": "prompt", "type": "prompt", "learnable": True, "text": "Solve it.",
              "variables": {"preamble": True}},
             {"name": "memory", "type": "memory", "learnable": learnable_memory, "text": memory or "(empty)",
              "variables": {}}]
    examples = [{"task": ADD, "output": "5", "passed": True, "feedback": "Correct."},
                {"task": SUB, "output": "13", "passed": passed, "feedback": "The answer 13 is wrong."}]
    return render_prompt(ag_method.__package__, "reflect", resources=shown, examples=examples)


def test_autogenesis_selection_names_the_memory_with_the_failed_tasks_rule() -> None:
    """autogenesis/prompts/reflect.md: a ```json object with reflection, resource, section, change; method.py keeps a
    selection that names a learnable resource (and, for a prompt, a learnable section)."""
    found = first_json(whole_and_fenced(_ask(_reflect(True))), dict)
    assert found is not None and (found["resource"], found["section"], found["change"]) == ("memory", "", RULES["sub"])
    prompt_only = first_json(whole_and_fenced(_ask(_reflect(False))), dict)
    assert prompt_only is not None and (prompt_only["resource"], prompt_only["section"]) == ("prompt", "preamble")


def test_autogenesis_selection_names_nothing_when_no_failure_is_new() -> None:
    assert first_json(whole_and_fenced(_ask(_reflect(True, passed=True))), dict) is None
    assert first_json(whole_and_fenced(_ask(_reflect(True, memory=RULES["sub"]))), dict) is None


def test_autogenesis_improvement_appends_the_change_and_repeats_a_text_that_holds_it() -> None:
    """autogenesis/prompts/improve.md: the complete new text in one ``` block (read with parse_instruction strict)."""
    prompt = render_prompt(ag_method.__package__, "improve", target="memory", current="", reflection="r",
                           change=RULES["sub"])
    text, _ = parse_instruction(_ask(prompt), "strict")
    assert text is not None and text.strip() == RULES["sub"]
    again = render_prompt(ag_method.__package__, "improve", target="memory", current=text, reflection="r",
                          change=RULES["sub"])
    assert parse_instruction(_ask(again), "strict")[0].strip() == text.strip()  # type: ignore[union-attr]


# -- Meta-Harness ---------------------------------------------------------------------------------------------------
def _propose(mode: str, role: str = mh_method.EXPLOIT, transcript: str = "") -> str:
    return render_prompt(mh_method.__package__, "propose", best_id="c0", best_accuracy=0.5, best_chars=10,
                         best_files={"system.md": "Solve it."}, mode=mode, max_tool_calls=3, role=role, inline="",
                         transcript=transcript, programs=False, bases=["c0"])


def _proposal(reply: str) -> dict[str, object]:
    found = first_json(final_candidates(reply), dict)
    assert found is not None
    return found


def test_meta_harness_proposer_with_full_access_reads_the_best_candidates_traces_first() -> None:
    """meta_harness/prompts/propose.md: `TOOL: read PATH`, one per reply; the history lays out candidates/<id>/."""
    call = parse_call(_ask(_propose("full")))
    assert call is not None and (call.name, call.argument) == ("read", "candidates/c0/traces.md")


def test_meta_harness_proposer_writes_the_failed_tasks_rules_from_the_traces() -> None:
    """propose.md: `FINAL:` and a ```json object whose `files` map system.md / memory/<name>.md to their text, with
    `base_system` when asked; the method's interface check adopts it."""
    traces = traces_text([{"task": "train-000", "input": SUB, "output": "13", "feedback": "The answer 13 is wrong."},
                          {"task": "train-001", "input": ADD, "output": "5", "feedback": "Correct."}])
    transcript = f"\n[you] TOOL: read candidates/c0/traces.md\n[tool output]\n{traces}\n"
    found = _proposal(_ask(_propose("full", transcript=transcript)))
    assert found["files"] == {"system.md": f"Solve it.\n- {RULES['sub']}\n"} and found["base_system"] == "c0"
    files, why = mh_method.MetaHarness()._interface(found)
    assert files is not None, why
    explore = _proposal(_ask(_propose("full", role=mh_method.EXPLORE, transcript=transcript)))
    assert explore["files"] == {"memory/lessons.md": f"- {RULES['sub']}\n"}


def test_meta_harness_proposer_without_traces_guesses_one_rule_per_candidate() -> None:
    exploit = _proposal(_ask(_propose("scores")))
    explore = _proposal(_ask(_propose("scores+summary", role=mh_method.EXPLORE)))
    assert exploit["files"] == {"system.md": f"Solve it.\n- {RULES['sub']}\n"}
    assert explore["files"] == {"memory/lessons.md": f"- {RULES['mul']}\n"}


def test_the_labels_learner_draws_each_labels_own_words_from_many_tickets() -> None:
    """A cue line holds the words only that label's tickets hold (`labels-student` reads `Label: cue, cue`)."""
    traces = [("Ticket: Hello. The invoice is wrong.\nLabels: Billing, Account", "Correct: Billing."),
              ("Ticket: Hello. My password fails.\nLabels: Billing, Account",
               "Wrong label Billing. The expected label is Account.")]
    assert cue_lines(traces) == ["Account: fails, password", "Billing: invoice, wrong"]
    text = traces_text([{"task": "train-000", "input": t, "output": "", "feedback": f} for t, f in traces])
    prompt = _propose("full", transcript=f"\n[you] TOOL: read candidates/c0/traces.md\n[tool output]\n{text}\n")
    found = _proposal(labels_learner([Message("user", prompt)], GenParams()))
    assert found["files"] == {"system.md": "Solve it.\n- Account: fails, password\n- Billing: invoice, wrong\n"}


# -- EvoTest on TextWorld -------------------------------------------------------------------------------------------
HISTORY = ("> go east\n-= Workshop =-\nYou can make out a bookshelf. On the bookshelf you can see a worm.\n"
           "> examine worm\nThe worm is unremarkable.\n> go west\n-= Office =-\nA toolbox.")


def test_evotests_textworld_evolver_asks_to_try_the_untried_interaction_and_is_kept() -> None:
    """evotest/prompts/evolve.md (released scope): the guiding prompt, then a <code> block with extract_state; both are
    kept by evotest/reply.py, and the extractor reads the game's own strings."""
    prompt = render_prompt(evotest_method.__package__, "evolve", paper=False, code=True, guide="Explore.",
                           lessons="", temperature=0.7, history=HISTORY,
                           failures="Actions to avoid (tail): go west, go east")
    reply = str(jitrl_textworld([Message("user", prompt)], GenParams()))
    evolved = evotest_parse(reply, "released")
    assert evolved.prompt is not None and "Try first: take worm from bookshelf." in evolved.prompt
    assert "go west, go east" in evolved.prompt and evolved.extractor is not None
    scope: dict[str, object] = {}
    exec(evolved.extractor, scope)  # noqa: S102 - the policy's own extractor, as the test wrote it
    assert scope["extract_state"](HISTORY) == "Rooms reached: Workshop, Office; objects taken: 0."  # type: ignore[operator]


def test_the_textworld_solver_takes_what_its_guide_asks_to_try_first() -> None:
    step = "Actions you can take: examine worm, go west, take worm from bookshelf\n> examine worm\n"
    assert guided("Try first: take worm from bookshelf.")(step)[0] == "take worm from bookshelf"
    assert guided("Explore.")(step)[0] == "go west"


# -- humaneval repair -----------------------------------------------------------------------------------------------
def test_the_repairer_fixes_a_bug_only_with_the_check_for_its_kind() -> None:
    """benchmarks/humaneval/mutate.py: the bug is one mutation of the canonical solution, of one of `KINDS`."""
    p = next(p for p in problems() if p.entry_point == "has_close_elements")
    bug = next(m for m in mutations(p.prompt, p.canonical_solution) if m.kind == "compare")
    assert recognised(bug.function) == (p, "compare")
    task = f"Fix it.\n\n```python\n{bug.function}```"
    bare = humaneval_repairer([Message("user", task)], GenParams())
    assert bare == f"```python\n{bug.function}```"
    taught = humaneval_repairer([Message("system", CHECKS["compare"]), Message("user", task)], GenParams())
    assert taught == f"```python\n{p.prompt}{p.canonical_solution}```"
    lesson = checklist(" ".join(task.split())[:600], "failed")
    assert lesson is not None and CHECKS["compare"] in lesson
