"""Per-metric-call overhead of GEPA's `optimize()` and DSPy's `Evaluate`, on a zero-latency fake model.

Every model call (task model and GEPA's reflection model) answers instantly and deterministically, so the
measured wall time is the frameworks' own bookkeeping per scored example: prompt building, candidate and
Pareto tracking, reflection plumbing (GEPA); adapter formatting/parsing, LM call path, threads (DSPy).
Run it in the same session as our own overhead benchmark and compare ratios, not absolute numbers.

Standalone: run with perf/.venv-compare/bin/python (gepa + dspy installed); never imports evoarena.
Usage: compare_frameworks.py TASKS.json OUT.json   (TASKS.json = {"tasks": [{id, question, answer}], "budget": N})
"""

from __future__ import annotations

import json
import re
import sys
import time
import zlib
from importlib.metadata import version
from pathlib import Path
from typing import Any

Task = dict[str, str]
_QUESTION_FIELD = re.compile(r"\[\[ ## question ## \]\]\n(.*?)(?:\n\n|\n\[\[|$)", re.S)


class FakeModel:
    """Answers a known question instantly: right for ~70% of (task id, salt) pairs, wrong otherwise."""

    def __init__(self, tasks: list[Task]) -> None:
        self.by_question = {t["question"]: t for t in tasks}
        self.calls = 0

    def find(self, text: str) -> Task:
        text = text.strip()
        if text in self.by_question:  # GEPA's DefaultAdapter: the user message is the question itself
            return self.by_question[text]
        m = _QUESTION_FIELD.search(text)  # DSPy's ChatAdapter: "[[ ## question ## ]]\n<q>\n\n..."
        if m and m.group(1).strip() in self.by_question:
            return self.by_question[m.group(1).strip()]
        return next(t for q, t in self.by_question.items() if q in text)

    def answer(self, text: str, salt: str = "") -> str:
        self.calls += 1
        task = self.find(text)
        right = zlib.crc32(f"{task['id']}|{salt}".encode()) % 100 < 70
        return task["answer"] if right else "unknown"


def run_gepa(tasks: list[Task], budget: int) -> dict[str, Any]:
    from gepa.adapters.default_adapter.default_adapter import DefaultDataInst, EvaluationResult
    from gepa.api import optimize as gepa_optimize

    model = FakeModel(tasks)
    counts = {"metric": 0, "reflection": 0}

    def task_lm(messages: Any) -> str:
        # The system prompt salts the hash, so a new instruction re-draws which tasks it gets right:
        # minibatch scores move and GEPA accepts some proposals (each acceptance triggers a full val eval).
        return model.answer(messages[-1]["content"], salt=messages[0]["content"])

    def evaluator(data: DefaultDataInst, response: str) -> EvaluationResult:
        counts["metric"] += 1
        ok = response.strip() == data["answer"]
        fb = "Correct." if ok else f"Incorrect: expected {data['answer']!r}, got {response.strip()!r}."
        return EvaluationResult(score=1.0 if ok else 0.0, feedback=fb)

    def reflection_lm(prompt: Any) -> str:
        # The default reflection prompt holds the current instruction in its first ``` block;
        # GEPA extracts the new one from the ``` block of the reply.
        counts["reflection"] += 1
        text = prompt if isinstance(prompt, str) else str(prompt)
        current = text.split("```", 2)[1].strip() if text.count("```") >= 2 else "Answer the question."
        return f"```\n{current}\nRevision {counts['reflection']}: state only the final answer.\n```"

    class Quiet:
        def log(self, message: str) -> None:
            pass

    def optimize(items: list[DefaultDataInst], max_calls: int) -> Any:
        return gepa_optimize(
            seed_candidate={"system_prompt": "Answer the question. Reply with the answer only."},
            trainset=items,
            valset=items,
            task_lm=task_lm,
            evaluator=evaluator,
            reflection_lm=reflection_lm,
            max_metric_calls=max_calls,
            logger=Quiet(),
            run_dir=None,
            use_wandb=False,
            use_mlflow=False,
            display_progress_bar=False,
            seed=0,
        )

    items: list[DefaultDataInst] = [
        {"input": t["question"], "answer": t["answer"], "additional_context": {}} for t in tasks
    ]
    optimize(items[:2], 6)  # warm-up: imports, first-call setup
    counts.update(metric=0, reflection=0)
    start = time.perf_counter()
    result = optimize(items, budget)
    seconds = time.perf_counter() - start
    calls = counts["metric"]
    return {
        "version": version("gepa"),
        "metric_calls": calls,
        "seconds": seconds,
        "s_per_metric_call": seconds / calls,
        "reported_total_metric_calls": result.total_metric_calls,
        "reflection_calls": counts["reflection"],
        "num_candidates": result.num_candidates,
    }


def run_dspy(tasks: list[Task]) -> dict[str, Any]:
    import dspy
    from dspy.lm15 import Message, Response, TextPart, Usage

    model = FakeModel(tasks)

    class FakeEngine:
        """A DSPy 3.4 custom engine (complete(Request) -> Response); no network, no litellm."""

        def complete(self, request: Any) -> Response:
            user = "\n".join(m.text or "" for m in request.messages if m.role == "user")
            reply = f"[[ ## answer ## ]]\n{model.answer(user)}\n\n[[ ## completed ## ]]"
            return Response(
                id=None,
                model="fake/zero-latency",
                message=Message.assistant([TextPart(reply)]),
                finish_reason="stop",
                usage=Usage(input_tokens=0, output_tokens=0, total_tokens=0),
            )

        def stream(self, request: Any) -> Any:
            raise NotImplementedError

        def close(self) -> None:
            pass

    # No response cache anywhere, or repeated prompts would be served without calling the engine.
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    lm = dspy.LM("fake/zero-latency", engine=FakeEngine(), cache=False)
    dspy.configure(lm=lm, adapter=dspy.ChatAdapter())
    program = dspy.Predict("question -> answer")

    def exact_match(example: Any, pred: Any, trace: Any = None) -> bool:
        return bool(str(pred.answer).strip() == example.answer)

    examples = [dspy.Example(question=t["question"], answer=t["answer"]).with_inputs("question") for t in tasks]

    def evaluate(devset: list[Any]) -> Any:
        return dspy.Evaluate(devset=devset, metric=exact_match, num_threads=1, display_progress=False)(program)

    evaluate(examples[:2])  # warm-up
    model.calls = 0
    start = time.perf_counter()
    result = evaluate(examples)
    seconds = time.perf_counter() - start
    if model.calls != len(examples):
        raise RuntimeError(f"expected {len(examples)} LM calls, saw {model.calls} (cache or parse retries?)")
    return {
        "version": version("dspy"),
        "examples": len(examples),
        "seconds": seconds,
        "s_per_metric_call": seconds / len(examples),
        "score": float(result.score),
    }


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    tasks: list[Task] = [{k: str(t[k]) for k in ("id", "question", "answer")} for t in spec["tasks"]]
    out = {"gepa": run_gepa(tasks, int(spec["budget"])), "dspy": run_dspy(tasks)}
    Path(sys.argv[2]).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
