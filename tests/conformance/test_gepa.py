"""evoarena's `gepa` against the installed `gepa` package (0.1.4, the `peers` extra), driven by the same inputs: the
reflection prompt, the output extraction, the Pareto parent selection, the acceptance rule, the merge, and one run of
each loop to the end. Line numbers are gepa 0.1.4's (site-packages/gepa/...)."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

gepa = pytest.importorskip("gepa", reason="the `gepa` package is not installed (pip install gepa==0.1.4, the peers "
                                          "extra): nothing to check evoarena's gepa against")

from gepa.core.adapter import EvaluationBatch  # noqa: E402
from gepa.gepa_utils import remove_dominated_programs, select_program_candidate_from_pareto_front  # noqa: E402
from gepa.proposer.base import CandidateProposal  # noqa: E402
from gepa.proposer.merge import MergeProposer, sample_and_attempt_merge_programs_by_common_predictors  # noqa: E402
from gepa.strategies.acceptance import StrictImprovementAcceptance  # noqa: E402
from gepa.strategies.instruction_proposal import InstructionProposalSignature  # noqa: E402

from evoarena.api import policy  # noqa: E402
from evoarena.benchmarks.arith.benchmark import ArithBenchmark  # noqa: E402
from evoarena.benchmarks.arith.generator import family_of  # noqa: E402
from evoarena.harness import load_tree  # noqa: E402
from evoarena.methods.gepa import merge  # noqa: E402
from evoarena.methods.gepa.merge import MergeState  # noqa: E402
from evoarena.methods.gepa.method import ACCEPT, SELECT  # noqa: E402
from evoarena.methods.prompting import render_prompt  # noqa: E402
from evoarena.methods.replies import parse_instruction  # noqa: E402
from evoarena.models import GenParams, Message  # noqa: E402
from evoarena.protocol.run.runner import run_experiment  # noqa: E402
from evoarena.scripted.arith import RULES, arith_student, solve_correctly  # noqa: E402
from evoarena.search import Scored, pareto_weights  # noqa: E402
from evoarena.store import RunStore  # noqa: E402

MARK = "I provided an assistant with the following instructions"


def released_prompt(instruction: str, examples: Sequence[dict[str, str]]) -> str:
    """The package's reflection prompt for one component, as the default adapter's reflective records feed it."""
    records = [{"Inputs": e["inputs"], "Generated Outputs": e["outputs"], "Feedback": e["feedback"]}
               for e in examples]
    out = InstructionProposalSignature.prompt_renderer(
        {"current_instruction_doc": instruction, "dataset_with_feedback": records})
    assert isinstance(out, str)
    return out


def normalised(text: str) -> str:
    """The one normalisation between the two prompts: runs of blank lines count as one, no trailing whitespace
    (the release separates examples by 3 blank lines and ends the block with 2; evoarena's template by 1)."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


EXAMPLES = [{"inputs": "Q: Ann has 3 apples and gets 2 more. How many?", "outputs": "5", "feedback": "Correct."},
            {"inputs": "Q: Count 'a' in: a b a\nsecond line", "outputs": "3", "feedback": "The answer 3 is wrong."}]


def test_reflection_prompt_equals_the_package_template() -> None:
    """strategies/instruction_proposal.py lines 13-29 (`default_prompt_template`) and 45-122 (`prompt_renderer`):
    evoarena's `prompts/reflect.md` rendered with an instruction and examples is the package's prompt up to the
    blank-line normalisation, and not identical without it (so the normalisation is all that is forgiven)."""
    ours = render_prompt("evoarena.methods.gepa", "reflect", instruction="Solve it.", examples=EXAMPLES)
    theirs = released_prompt("Solve it.", EXAMPLES)
    assert normalised(ours) == normalised(theirs)
    assert ours != theirs
    assert [ln for ln in ours.splitlines() if ln] == [ln for ln in theirs.splitlines() if ln]


REPLIES = {
    "fenced": "Here it is:\n```\nAdd the numbers.\nCheck twice.\n```\nDone.",
    "fenced with a tag": "```markdown\nAdd the numbers.\n```",
    "unfenced": "  Add the numbers.\nCheck twice.  \n",
    "lone opening fence": "```text\nAdd the numbers.",
    "lone closing fence": "Add the numbers.\n```",
    "multiple fences": "```\nfirst\n```\nand\n```\nsecond\n```",
    "blank first line": "```\n\nAdd the numbers.\n```",
}


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_extraction_equals_the_package_extractor(name: str) -> None:
    """strategies/instruction_proposal.py lines 124-153 (`output_extractor`): under `fences: released` evoarena
    reads the same instruction from each reply (evoarena ends it with one newline)."""
    reply = REPLIES[name]
    ours, _ = parse_instruction(reply, "released")
    assert ours is not None
    assert ours.rstrip("\n") == InstructionProposalSignature.output_extractor(reply)["new_instruction"]


def test_extraction_known_differences() -> None:
    """instruction_proposal.py lines 132-151: where evoarena deliberately differs — an empty reply is refused (the
    release proposes an empty instruction), a one-word fenced body is kept (the release drops it as a language tag),
    and a first line indented before a tag is dropped as a tag (the release keeps it)."""
    extract = InstructionProposalSignature.output_extractor
    assert parse_instruction("", "released")[0] is None and extract("")["new_instruction"] == ""
    assert parse_instruction("```Summarise\n```", "released")[0] == "Summarise\n"
    assert extract("```Summarise\n```")["new_instruction"] == ""
    assert parse_instruction("```  text\nAdd.\n```", "released")[0] == "Add.\n"
    assert extract("```  text\nAdd.\n```")["new_instruction"] == "text\nAdd."


def _random_archive(rng: random.Random, n: int, k: int) -> tuple[Scored, ...]:
    return tuple(Scored(f"c{i}", tuple(float(rng.random() < 0.5) for _ in range(k))) for i in range(n))


def _fronts(archive: Sequence[Scored]) -> tuple[dict[int, set[int]], list[float]]:
    """The package's `program_at_pareto_front_valset` (core/state.py lines 486-510) and per-program mean scores."""
    fronts: dict[int, set[int]] = {}
    for k in range(len(archive[0].scores)):
        top = max(c.scores[k] for c in archive)
        fronts[k] = {i for i, c in enumerate(archive) if c.scores[k] == top}
    return fronts, [c.mean for c in archive]


def test_pareto_weights_equal_the_package_frequencies() -> None:
    """gepa_utils.py lines 37-75 (`remove_dominated_programs`) and 99-107 (the sampling list): on 300 random
    archives, evoarena's weight per candidate is the number of times the package lists it."""
    rng = random.Random(0)
    for _ in range(300):
        archive = _random_archive(rng, rng.randint(1, 6), rng.randint(1, 6))
        fronts, scores = _fronts(archive)
        kept = remove_dominated_programs(fronts, scores=dict(enumerate(scores)))
        theirs = Counter(p for front in kept.values() for p in front)
        ours = {k: w for k, w in pareto_weights(archive).items() if w > 0}
        assert ours == {f"c{p}": n for p, n in theirs.items()}


def test_parent_selection_frequencies_match_the_package() -> None:
    """gepa_utils.py lines 90-117 (`select_program_candidate_from_pareto_front`, `rng.choice` over the sampling
    list) vs `search.ParetoSampler` (`rng.choices`, weighted): the two draw from different calls of the random
    stream, so each is drawn 4000 times on one archive and the frequencies must agree within 0.03 (about 4 standard
    errors)."""
    archive = (Scored("c0", (1, 0, 0, 0, 1)), Scored("c1", (1, 1, 0, 0, 0)), Scored("c2", (0, 1, 1, 1, 0)),
               Scored("c3", (0, 0, 0, 0, 1)))
    fronts, scores = _fronts(archive)
    n = 4000
    ours = Counter(SELECT.select(archive, random.Random(s)).id for s in range(n))
    theirs = Counter(f"c{select_program_candidate_from_pareto_front(fronts, scores, random.Random(s))}"
                     for s in range(n))
    assert set(ours) == set(theirs)
    for cid in theirs:
        assert abs(ours[cid] - theirs[cid]) / n < 0.03, (cid, ours, theirs)


def test_acceptance_equals_strict_improvement() -> None:
    """strategies/acceptance.py lines 44-53 (`StrictImprovementAcceptance`, the default): the same accept / reject
    on 500 random before/after minibatch scores, ties included (refused)."""
    rng = random.Random(0)
    ties = 0
    for _ in range(500):
        before = [float(rng.randint(0, 1)) for _ in range(3)]
        after = [float(rng.randint(0, 1)) for _ in range(3)]
        ties += sum(before) == sum(after)
        proposal = CandidateProposal(candidate={}, parent_program_ids=[0], subsample_scores_before=before,
                                     subsample_scores_after=after)
        assert ACCEPT.decide(before, after).accepted == StrictImprovementAcceptance().should_accept(
            proposal, None)  # type: ignore[arg-type]  # the release reads no state
    assert ties > 50


def _random_pool(rng: random.Random) -> tuple[list[dict[str, str]], list[list[int]], list[float]]:
    """A lineage of 4-8 programs with two components, children often keeping a parent's text, an occasional merged
    child with two parents; distinct mean scores (so no draw decides a component: the release iterates a set of
    component names, whose order is not evoarena's)."""
    programs = [{"a": "a0", "b": "b0"}]
    parents: list[list[int]] = [[]]
    for k in range(1, rng.randint(4, 8)):
        ps = rng.sample(range(k), 2) if k > 2 and rng.random() < 0.2 else [rng.randrange(k)]
        child = dict(programs[ps[-1]])
        child[rng.choice("ab")] = f"{rng.choice('ab')}{k}"
        programs.append(child)
        parents.append(ps)
    agg = rng.sample([i / 100 for i in range(1, 100)], len(programs))
    return programs, parents, agg


def test_merge_pair_ancestor_and_components_equal_the_package() -> None:
    """proposer/merge.py lines 69-207 (`find_common_ancestor_pair`, `filter_ancestors`, the per-component rule,
    the tried-triplet and built-merge skips): with the random stream seeded alike, 400 random pools give the same
    (i, j, ancestor) and the same merged components, twice in a row on one state (the second skips the first)."""
    rng = random.Random(1)
    merged = 0
    for seed in range(400):
        programs, parents, agg = _random_pool(rng)
        front = sorted(rng.sample(range(len(programs)), rng.randint(2, len(programs))))
        ours_rng, theirs_rng = random.Random(seed), random.Random(seed)
        state, performed = MergeState(), ([], [])  # type: ignore[var-annotated]
        released_parents = [p or [None] for p in parents]
        for _ in range(2):
            ours = merge.attempt(ours_rng, programs, parents, front, agg, state, lambda i, j: True)
            theirs = sample_and_attempt_merge_programs_by_common_predictors(
                agg_scores=agg, rng=theirs_rng, merge_candidates=front, merges_performed=performed,
                program_candidates=programs, parent_program_for_candidate=released_parents,
                has_val_support_overlap=lambda i, j: True)
            if theirs is None:
                assert ours is None
                continue
            performed[0].append(theirs[1:])  # MergeProposer.propose, line 329
            assert ours == (theirs[0], theirs[1:])
            merged += 1
    assert merged > 100


def test_merge_subsample_equals_the_package() -> None:
    """proposer/merge.py lines 258-288 (`select_eval_subsample_for_merged_program`, 5 ids): the same ids from the
    same random stream on 300 random pairs of val score tables (ids in ascending order, as the release's set of
    integer ids iterates)."""
    rng = random.Random(2)
    for seed in range(300):
        ids = range(rng.randint(1, 12))
        s1 = {i: float(rng.randint(0, 2)) / 2 for i in ids}
        s2 = {i: float(rng.randint(0, 2)) / 2 for i in ids}
        proposer = MergeProposer(logger=None, valset=None, evaluator=None, use_merge=True,  # type: ignore[arg-type]
                                 max_merge_invocations=5, rng=random.Random(seed))
        theirs = proposer.select_eval_subsample_for_merged_program(s1, s2)
        assert merge.subsample(random.Random(seed), s1, s2) == theirs  # type: ignore[arg-type]


def test_merge_schedule_defaults_equal_the_package() -> None:
    """api.py lines 68-70 (`use_merge=False`, `max_merge_invocations=5`, `merge_val_overlap_floor=5`) and
    proposer/merge.py line 262 (`num_subsample_ids=5`): evoarena's defaults and subsample size."""
    import inspect

    from evoarena.protocol.catalog import build_method

    sig = inspect.signature(gepa.optimize).parameters
    params = build_method("gepa", {}).params
    assert params.use_merge == sig["use_merge"].default
    assert params.max_merge_invocations == sig["max_merge_invocations"].default
    assert params.merge_val_overlap_floor == sig["merge_val_overlap_floor"].default
    sub = inspect.signature(MergeProposer.select_eval_subsample_for_merged_program).parameters
    assert sub["num_subsample_ids"].default == merge.SUBSAMPLE


# --- one run of each loop ----------------------------------------------------------------------------------------

EXAMPLE = r"^## Inputs\n(.*?)\n\n## Generated Outputs\n(.*?)\n\n## Feedback\n(.*?)\n\n(?=# Example|```)"
BENCH = {"seed": 0, "n_train": 12, "n_val": 6, "n_test": 10, "families": ["add", "sub", "mul", "count"]}
"""Families whose rules are independent (two_step's rule also teaches sub, so the order of discovery would matter)."""
SENT: list[str] = []


def propose(prompt: str) -> str:
    """A deterministic reflection model: the instruction plus the rule of the first (sorted) family an example got
    wrong that the instruction lacks, one rule per proposal, rules kept sorted under the first line."""
    lines = prompt.split("```", 2)[1].strip().splitlines()
    shown = re.findall(r"^## Inputs\n(.+)\n\n## Generated Outputs\n(.*)\n", prompt, flags=re.M)
    wrong = sorted({RULES[family_of(q)] for q, out in shown if out.strip() != str(solve_correctly(q))} - set(lines[1:]))
    return "```\n" + "\n".join([lines[0], *sorted(set(lines[1:]) | set(wrong[:1]))]) + "\n```"


@policy("test-gepa-conformance")
def conformance_policy(messages: Sequence[Message], params: GenParams) -> str:
    text = messages[-1].content
    if MARK in text:
        SENT.append(text)
        return propose(text)
    return arith_student(messages, params)


class ArithAdapter:
    """The package's adapter for the same solver: the system prompt is the candidate, the task as arith formats it,
    the scripted student's reply graded by the benchmark; its reflective records as the default adapter's."""

    propose_new_texts = None

    def __init__(self, bench: ArithBenchmark) -> None:
        self.bench = bench

    def evaluate(self, batch: list[Any], candidate: dict[str, str], capture_traces: bool = False) -> EvaluationBatch:
        outs, scores, traces = [], [], []
        for t in batch:
            out = arith_student([Message("system", candidate["system.md"]), Message("user", self.bench.format_task(t))],
                                GenParams())
            fb = self.bench.grade(t, self.bench.parse(out).answer)
            outs.append(out)
            scores.append(fb.score)
            traces.append({"Inputs": t.prompt, "Generated Outputs": out.strip(), "Feedback": fb.message})
        return EvaluationBatch(outputs=outs, scores=scores, trajectories=traces if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], batch: EvaluationBatch,
                                components: list[str]) -> dict[str, list[dict[str, str]]]:
        return {c: list(batch.trajectories or []) for c in components}


class _Quiet:
    def log(self, message: str) -> None:
        pass


@pytest.mark.parametrize("use_merge", [False, True])
def test_one_run_of_each_loop_accepts_the_same_proposals(tmp_path: Path, make_spec: Any, use_merge: bool) -> None:
    """api.py `optimize` (engine.py lines 700-850, reflective_mutation.py `propose`) with a tiny adapter and the
    deterministic reflection model above, vs evoarena's gepa on the scripted model with the same proposals: the
    same number of accepted proposals and the same final instruction, and every prompt evoarena sent is the
    package's prompt for the instruction and examples it carries (up to the blank-line normalisation). The two
    loops draw minibatches differently (the release walks epoch-shuffled train ids, evoarena leads with the step's
    task), so the order of acceptances is not compared, only where both end. With merge on (engine.py lines
    767-843) both loops schedule merges after each acceptance and find no pair (every candidate descends from the
    one before), so both end alike."""
    bench = ArithBenchmark(**BENCH)
    tasks = bench.generate()
    train, val = [t for t in tasks if t.split == "train"], [t for t in tasks if t.split == "val"]
    seed_text = bench.system_prompt().strip()
    released = gepa.optimize(seed_candidate={"system.md": seed_text}, trainset=train, valset=val,
                             adapter=ArithAdapter(bench), reflection_lm=propose, max_metric_calls=300, seed=0,
                             use_merge=use_merge,
                             logger=_Quiet(), display_progress_bar=False)

    SENT.clear()
    spec = make_spec(benchmark={"name": "arith", "params": BENCH},
                     methods=[{"name": "gepa", "params": {"use_merge": use_merge}}],
                     models={"s": {"backend": "scripted", "model": "test-gepa-conformance"}},
                     roles={"solver": "s", "proposer": "s"})
    run_experiment(spec, tmp_path / "run")
    store = RunStore(tmp_path / "run")
    rows = store.query("SELECT payload FROM events WHERE kind='gepa_iteration'")
    accepted = sum('"accepted": true' in r["payload"] for r in rows)
    final = load_tree(store, store.cells()[0]["current_version"])["system.md"]

    assert accepted == len(released.candidates) - 1 == 3
    merges = store.query("SELECT payload FROM events WHERE kind='gepa_merge'")
    assert len(merges) == (3 if use_merge else 0) and all('"merged": false' in r["payload"] for r in merges)
    assert final.strip() == released.best_candidate["system.md"]  # type: ignore[index]
    assert SENT
    for text in SENT:
        instruction = text.split("```\n", 1)[1].split("\n```", 1)[0]
        blocks = re.findall(EXAMPLE, text, flags=re.M | re.S)
        examples = [{"inputs": i, "outputs": o, "feedback": f} for i, o, f in blocks]
        assert examples
        assert normalised(text) == normalised(released_prompt(instruction, examples))
