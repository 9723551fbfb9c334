"""The `judge` grader of the `files` benchmark: a model in the spec's `judge` role reads a rubric filled with the
task, the reference(s) and the answer, and ends its reply with `Score: <0..1>` (or PASS / FAIL). A reply that does not
end so is an error feedback (the attempt is recorded as ungraded), never a silent 0 or 1."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from evoarena.api import Feedback
from evoarena.api.grading import GradingModel
from evoarena.benchmarks.files.graders import Grader, GraderError, normalize
from evoarena.models import Message, ModelCallError

ROLE = "judge"
DEFAULT_RUBRIC = Path(__file__).with_name("judge_rubric.md")
FIELDS = ("question", "answer", "reference", "references", "row")
"""What a rubric may use: the task's prompt, the parsed answer, the first and all references, the file's row."""
COMMENT_CHARS = 400

_SCORE = re.compile(r"score\s*[:=]\s*(\d+(?:\.\d+)?|\.\d+)\s*(?:/\s*1(?:\.0*)?)?", re.I)
_VERDICT = re.compile(r"(?:verdict\s*[:=]\s*)?(pass|fail)", re.I)


def load_rubric(path: str) -> jinja2.Template:
    """The rubric template (`path`, or the default next to this module), refusing unknown fields in one line."""
    where = "benchmark.params.rubric" if path else str(DEFAULT_RUBRIC)
    file = Path(path).expanduser() if path else DEFAULT_RUBRIC
    file = file if file.is_absolute() else Path.cwd() / file
    if not file.is_file():
        raise GraderError(f"{where}: no such file {path!r} (relative paths resolve against the current directory "
                          f"{Path.cwd()})")
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
    source = file.read_text(encoding="utf-8")
    try:
        names = jinja2.meta.find_undeclared_variables(env.parse(source))
    except jinja2.TemplateSyntaxError as err:
        raise GraderError(f"{where}: {file.name}:{err.lineno}: not a valid template ({err.message})") from None
    unknown = sorted(names - set(FIELDS))
    if unknown:
        raise GraderError(f"{where}: {file.name} uses unknown field(s) {', '.join(unknown)} "
                          f"(known: {', '.join(FIELDS)})")
    if "answer" not in names:
        raise GraderError(f"{where}: {file.name} never shows the judge the answer ({{{{ answer }}}})")
    return env.from_string(source)


def read_score(reply: str) -> tuple[float | None, str]:
    """The score the reply's last non-empty line gives (`Score: 0.8`, `Score: 1/1`, `PASS`, `Verdict: FAIL`), or None
    and why not; the rest of the reply is the judge's comment."""
    lines = [line for line in reply.splitlines() if line.strip()]
    if not lines:
        return None, "the reply is empty"
    last = lines[-1].replace("*", "").replace("`", "").strip()  # markdown emphasis: **Score:** 1
    score = _SCORE.fullmatch(last)
    if score:
        value = float(score.group(1))
        return (value, "") if 0.0 <= value <= 1.0 else (None, f"score {value:g} is outside 0..1")
    verdict = _VERDICT.fullmatch(last)
    if verdict:
        return (1.0 if verdict.group(1).lower() == "pass" else 0.0), ""
    shown = last if len(last) <= 80 else last[:79] + "…"
    return None, f"its last line {shown!r} is not `Score: <0..1>` or PASS/FAIL"


def _names_a_reference(text: str, references: Sequence[str]) -> bool:
    norm = normalize(text, drop_articles=False)
    for ref in references:
        r = normalize(ref, drop_articles=False)
        if r and re.search(rf"(?<!\w){re.escape(r)}(?!\w)", norm):
            return True
    return False


class Judge(Grader):
    """An LLM judge: the `judge` role grades the (by default whole) output against the references with a rubric
    (`rubric`: a template file; default judge_rubric.md); passed when its score reaches `pass_threshold`."""

    name = "judge"
    default_parse = "full"
    options = ("rubric", "judge_max_tokens", "pass_threshold")

    def __init__(self, params: Mapping[str, Any], parse: str = "") -> None:
        super().__init__(params, parse)
        self.template = load_rubric(str(params.get("rubric") or ""))
        self.max_tokens = int(params.get("judge_max_tokens", 256))
        self.threshold = float(params.get("pass_threshold", 1.0))
        self._model: GradingModel | None = None
        self._memo: dict[tuple[str, str, tuple[str, ...]], Feedback] = {}
        self._lock = threading.Lock()

    def bind(self, model: GradingModel) -> None:
        self._model = model

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        """One reference and no question (where no task is at hand)."""
        return self.grade("", answer, [reference], row)

    def grade(self, question: str, answer: str, references: Sequence[str], row: Mapping[str, Any]) -> Feedback:
        """One judge call per (task, answer), memoised; a provider error is not memoised, so a later grading retries."""
        key = (question, answer, tuple(references))
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        feedback, keep = self._judge(question, answer, references, row)
        if keep:
            with self._lock:
                self._memo[key] = feedback
        return feedback

    def _judge(self, question: str, answer: str, references: Sequence[str],
               row: Mapping[str, Any]) -> tuple[Feedback, bool]:
        if self._model is None:
            raise RuntimeError("the judge grader has no model: the runner binds the spec's `judge` role to it")
        prompt = self.template.render(question=question, answer=answer, reference=references[0],
                                      references=list(references), row=dict(row))
        params = replace(self._model.default_params, max_tokens=self.max_tokens)
        unread = "The judge's reply could not be read, so this answer was not graded."
        try:
            out = self._model.complete([Message("user", prompt)], params)
        except ModelCallError as err:
            return Feedback(0.0, False, "The judge could not be reached, so this answer was not graded.",
                            error=f"judge call failed: {err}"), False
        call = f"judge call {out.call_id}" if out.call_id is not None else "judge call"
        if out.finish_reason == "length":
            return Feedback(0.0, False, unread, error=f"{call}: reply cut off at max_tokens={self.max_tokens} "
                                                      "(judge_max_tokens)"), True
        value, why = read_score(out.text)
        if value is None:
            return Feedback(0.0, False, unread, error=f"{call}: unreadable reply: {why}"), True
        passed = value >= self.threshold
        head = (f"The judge accepted the answer (score {value:.2f})." if passed else
                f"The judge did not accept the answer (score {value:.2f}; {self.threshold:.2f} passes).")
        comment = " ".join(line.strip() for line in out.text.strip().splitlines()[:-1] if line.strip())
        if comment and _names_a_reference(comment, references):
            comment = "(The judge's comment named the reference answer and is withheld.)"
        elif len(comment) > COMMENT_CHARS:
            comment = comment[: COMMENT_CHARS - 1] + "…"
        return Feedback(value, passed, f"{head} {comment}".strip()), True
