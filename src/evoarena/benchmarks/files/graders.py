"""Deterministic graders for the `files` benchmark.

Each grader does two things: `parse` reads the answer out of the solver's output (the part of it that the `parse`
mode selects, then the grader's own extraction: the first number, a choice letter, a pattern's match), and `score`
compares that answer with one reference, returning a Feedback whose score is in [0, 1] and whose message is what
methods see. Messages never name the reference; the benchmark appends it when `reveal` is on.

The parse modes and the answer region are in parsing.py (re-exported here).
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

from evoarena.api import Feedback, Parsed
from evoarena.benchmarks.files.loader import FileTasksError
from evoarena.benchmarks.files.parsing import LETTERS, PARSE_MODES, Number, first_number, normalize, region
from evoarena.wording import unknown

__all__ = [
    "LETTERS", "PARSE_MODES", "Grader", "GraderError", "Number", "first_number", "make_grader", "normalize", "region",
]


class GraderError(FileTasksError):
    """A grader that cannot be built, a reference it cannot use, or a user grader that misbehaved (one line)."""



def _tolerance(value: float) -> Fraction:
    return Fraction(str(value))  # the decimal literal exactly, so a tolerance edge is an exact comparison


# --- graders -------------------------------------------------------------------------------------------------------


class Grader(ABC):
    """One way of reading and scoring an answer. `options` are the benchmark params that apply to it."""

    name: ClassVar[str]
    default_parse: ClassVar[str] = "answer"
    options: ClassVar[tuple[str, ...]] = ()
    missing: str = "The output was empty."
    """What methods are told when nothing could be read from the output."""

    def __init__(self, params: Mapping[str, Any], parse: str = "") -> None:
        self.params = params
        self.parse_mode = parse or self.default_parse

    def parse(self, text: str) -> Parsed:
        picked = region(text, self.parse_mode)
        if picked is None:
            return Parsed(None, "empty output")
        return self.extract(picked)

    def extract(self, picked: str) -> Parsed:
        """The grader's own reading of the selected region (by default the region itself)."""
        return Parsed(picked)

    def check_reference(self, reference: str, row: Mapping[str, Any]) -> str | None:
        """Why `reference` cannot be graded against (checked when the file is loaded), or None."""
        return None

    @abstractmethod
    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        """Score one parsed answer against one reference."""

    def grade(self, question: str, answer: str, references: Sequence[str], row: Mapping[str, Any]) -> Feedback:
        """The task's verdict: the best over its accepted references (a judge reads the question and all at once)."""
        return max((self.score(answer, ref, row) for ref in references), key=lambda f: (f.passed, f.score))


def _quote(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _verdict(ok: bool, wrong: str) -> Feedback:
    return Feedback(1.0 if ok else 0.0, ok, "Correct." if ok else wrong)


class Exact(Grader):
    """The answer equals the reference (both stripped; `ignore_case` folds case)."""

    name = "exact"
    options = ("ignore_case",)

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        a, r = answer.strip(), reference.strip()
        if self.params.get("ignore_case"):
            a, r = a.casefold(), r.casefold()
        return _verdict(a == r, f"The answer {_quote(answer)} does not match the reference exactly.")


class Normalized(Grader):
    """Equal after normalisation: case, whitespace, punctuation and (with `drop_articles`) a/an/the."""

    name = "normalized"
    options = ("drop_articles",)

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        drop = bool(self.params.get("drop_articles", True))
        a, r = normalize(answer, drop), normalize(reference, drop)
        return _verdict(a == r, f"The answer {_quote(answer)} does not match the reference "
                                "(compared ignoring case, spacing and punctuation).")


class Numeric(Grader):
    """The first number of the answer (in digits, or a whole number in English words: `twenty-one`) equals the
    reference's within `tolerance` (absolute) or `rel_tolerance` (relative to the reference); a `%` on one side only
    also matches as a fraction (50% = 0.5)."""

    name = "numeric"
    options = ("tolerance", "rel_tolerance")
    missing = "No number was found in the answer."

    def extract(self, picked: str) -> Parsed:
        n = first_number(picked)
        return Parsed(n.text) if n else Parsed(None, f"no number in {_quote(picked)}")

    def check_reference(self, reference: str, row: Mapping[str, Any]) -> str | None:
        return None if first_number(reference) else f"answer {_quote(reference)} holds no number"

    def close(self, a: Number, r: Number) -> bool:
        abs_tol = _tolerance(self.params.get("tolerance", 0.0))
        rel_tol = _tolerance(self.params.get("rel_tolerance", 0.0))
        pairs = [(a.value, r.value)]
        if a.percent != r.percent:
            pairs.append((a.value / 100 if a.percent else a.value, r.value / 100 if r.percent else r.value))
        return any(abs(x - y) <= abs_tol or abs(x - y) <= rel_tol * abs(y) for x, y in pairs)

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        a, r = first_number(answer), first_number(reference)
        if a is None or r is None:
            return Feedback(0.0, False, self.missing)
        tol = [f"absolute {self.params['tolerance']}" if self.params.get("tolerance") else "",
               f"relative {self.params['rel_tolerance']}" if self.params.get("rel_tolerance") else ""]
        within = f" (tolerance: {', '.join(t for t in tol if t)})" if any(tol) else ""
        return _verdict(self.close(a, r), f"The answer {a.text} is not the expected value{within}.")


class Regex(Grader):
    """Without `pattern`: the reference is a regular expression the whole answer must match. With `pattern`: the
    pattern's first match in the output (its group 1 if it has one) is the answer, compared with the reference
    literally (`ignore_case` applies to both forms)."""

    name = "regex"
    options = ("pattern", "ignore_case")

    def __init__(self, params: Mapping[str, Any], parse: str = "") -> None:
        pattern = str(params.get("pattern") or "")
        super().__init__(params, parse or ("full" if pattern else ""))
        self.flags: int = re.I if params.get("ignore_case") else 0
        self.pattern: re.Pattern[str] | None = None
        if pattern:
            try:
                self.pattern = re.compile(pattern, self.flags | re.M)
            except re.error as err:
                raise GraderError(f"benchmark.params.pattern: not a valid regular expression ({err})") from None
        self.missing = "The output did not match the answer pattern." if pattern else Grader.missing

    def extract(self, picked: str) -> Parsed:
        if self.pattern is None:
            return Parsed(picked)
        m = self.pattern.search(picked)
        if m is None:
            return Parsed(None, f"pattern {self.pattern.pattern!r} does not match the output")
        return Parsed((m.group(1) if self.pattern.groups else m.group(0)).strip())

    def check_reference(self, reference: str, row: Mapping[str, Any]) -> str | None:
        if self.pattern is not None:
            return None
        try:
            re.compile(reference)
        except re.error as err:
            return f"answer {_quote(reference)} is not a valid regular expression ({err})"
        return None

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        if self.pattern is not None:
            a, r = answer.strip(), reference.strip()
            ok = a.casefold() == r.casefold() if self.flags else a == r
            return _verdict(ok, f"The answer {_quote(answer)} is not the expected one.")
        ok = re.fullmatch(reference, answer.strip(), self.flags) is not None
        return _verdict(ok, f"The answer {_quote(answer)} does not have the expected form.")


class Contains(Grader):
    """The reference appears in the output as a whole word or phrase (`4` is not in `14`); `ignore_case` folds
    case."""

    name = "contains"
    default_parse = "full"
    options = ("ignore_case",)

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        ref = reference.strip()
        left = r"(?<!\w)" if ref[:1].isalnum() or ref[:1] == "_" else ""
        right = r"(?!\w)" if ref[-1:].isalnum() or ref[-1:] == "_" else ""
        flags = re.I if self.params.get("ignore_case") else 0
        ok = bool(ref) and re.search(left + re.escape(ref) + right, answer, flags) is not None
        return _verdict(ok, "The output does not contain the expected answer.")


def choice_list(value: Any) -> list[str]:
    """A row's choices: a list, a JSON array in a string, or a string split on `|` (or on new lines)."""
    if value is None or value == "":
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    parts = text.split("|") if "|" in text else text.splitlines()
    return [p.strip() for p in parts if p.strip()]


def lettered(choices: Sequence[str]) -> str:
    """`A. first` / `B. second` …, one per line (the `{options}` field of a template)."""
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices))


class Choice(Grader):
    """Multiple choice. The answer is read as a letter (`B`, `(b)`, `B) Paris`, `the answer is B`) or as one
    choice's text; the reference may be a letter or a choice's text. Texts are compared normalised."""

    name = "choice"
    options = ("choices", "drop_articles")
    missing = "No choice was found in the answer."

    def choices(self, row: Mapping[str, Any]) -> list[str]:
        return choice_list(row.get(str(self.params.get("choices", "choices"))))

    def _norm(self, text: str) -> str:
        return normalize(text, bool(self.params.get("drop_articles", True)))

    def letters(self, choices: Sequence[str]) -> str:
        return LETTERS[: len(choices)] if choices else LETTERS[:5]

    def pick(self, text: str, choices: Sequence[str]) -> str | None:
        """The letter `text` chooses, or None when it names no choice (or several)."""
        letters = self.letters(choices)
        norm = self._norm(text)
        texts = [self._norm(c) for c in choices]
        if norm and norm in texts:
            return letters[texts.index(norm)]
        bare = re.fullmatch(r"[(\[]?([A-Za-z])[)\].:]?", text.strip())
        if bare and bare.group(1).upper() in letters:
            return bare.group(1).upper()
        lead = re.match(r"[(\[]?([A-Z])[)\].:](?:\s|$)", text.strip())
        if lead and lead.group(1) in letters:
            return lead.group(1)
        said = re.findall(r"(?i:answer|option|choice)\s*(?:(?i:is)\s*)?[:\-]?\s*[(\[]?([A-Z])\b", text)
        said = [s for s in said if s in letters]
        if said:
            return said[-1]
        inside = {letters[i] for i, t in enumerate(texts) if t and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", norm)}
        if len(inside) == 1:
            return inside.pop()
        alone = {c for c in re.findall(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", text) if c in letters}
        return alone.pop() if len(alone) == 1 else None

    def reference_letter(self, reference: str, choices: Sequence[str]) -> str | None:
        ref = reference.strip()
        bare = re.fullmatch(r"[(\[]?([A-Z])[)\].]?", ref)
        if bare and bare.group(1) in self.letters(choices):
            return bare.group(1)
        texts = [self._norm(c) for c in choices]
        return self.letters(choices)[texts.index(self._norm(ref))] if self._norm(ref) in texts else None

    def check_reference(self, reference: str, row: Mapping[str, Any]) -> str | None:
        choices = self.choices(row)
        if choices and self.reference_letter(reference, choices) is None:
            return (f"answer {_quote(reference)} is neither a letter {self.letters(choices)[0]}–"
                    f"{self.letters(choices)[-1]} nor one of the choices")
        return None

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        choices = self.choices(row)
        expected = self.reference_letter(reference, choices)
        if expected is None:  # a text reference and no choices to map it to a letter: compare the texts
            ok = self._norm(answer) == self._norm(reference)
            return _verdict(ok, f"The answer {_quote(answer)} is not the correct choice.")
        picked = self.pick(answer, choices)
        if picked is None:
            span = self.letters(choices)
            return Feedback(0.0, False, f"No choice was found in the answer {_quote(answer)} (a letter "
                                        f"{span[0]}–{span[-1]} or a choice's text).")
        shown = f"{picked} ({choices[LETTERS.index(picked)]})" if choices else picked
        return _verdict(picked == expected, f"The answer picks {shown}, which is not the correct choice.")


GraderFn = Callable[[str, str, dict[str, Any]], Any]


def import_function(ref: str, search: Sequence[Path] = ()) -> GraderFn:
    """`module:function`, imported with the current directory (and `search`) on the import path."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise GraderError(f"benchmark.params.grader: {ref!r}: expected module:function")
    for path in [Path.cwd(), *search]:
        entry = str(Path(path).resolve())
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise GraderError(f"benchmark.params.grader: {ref!r}: cannot import {module_name} ({err}; modules are "
                          f"imported from the current directory {Path.cwd()})") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise GraderError(f"benchmark.params.grader: {ref!r}: {module_name} has no {attr}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise GraderError(f"benchmark.params.grader: {ref!r} is not callable")
    fn: GraderFn = obj
    return fn


class Function(Grader):
    """A user's `module:function(output, reference, row) -> float | bool | (float, str)`; `output` is the parsed
    answer (the whole output unless `parse` says otherwise), `row` the file's row. Passed when the score reaches
    `pass_threshold`."""

    name = "function"
    default_parse = "full"
    options = ("pass_threshold",)

    def __init__(self, params: Mapping[str, Any], parse: str = "", *, ref: str) -> None:
        super().__init__(params, parse)
        self.ref = ref
        self.fn = import_function(ref)

    def score(self, answer: str, reference: str, row: Mapping[str, Any]) -> Feedback:
        try:
            result = self.fn(answer, reference, dict(row))
        except Exception as err:  # a user's bug is named in one line, not a traceback
            raise GraderError(f"grader {self.ref}: raised {type(err).__name__}: {err}") from None
        message = ""
        if isinstance(result, tuple):
            if len(result) != 2 or not isinstance(result[1], str):
                raise GraderError(f"grader {self.ref}: returned {result!r} (expected a score or (score, message))")
            result, message = result
        if isinstance(result, bool):
            result = float(result)
        if not isinstance(result, int | float) or not 0.0 <= float(result) <= 1.0 or math.isnan(float(result)):
            raise GraderError(f"grader {self.ref}: returned score {result!r} (expected a number in [0, 1])")
        score = float(result)
        passed = score >= float(self.params.get("pass_threshold", 1.0))
        return Feedback(score, passed, message or ("Correct." if passed else f"Score {score:.2f}."))


BUILTIN: dict[str, type[Grader]] = {g.name: g for g in (Exact, Normalized, Numeric, Regex, Contains, Choice)}
ALL: tuple[type[Grader], ...] = (*BUILTIN.values(), Function)
OPTIONS = sorted({o for g in ALL for o in g.options})


def make_grader(name: str, params: Mapping[str, Any], given: Sequence[str] = (), parse: str = "",
                extra: Sequence[type[Grader]] = ()) -> Grader:
    """The grader `name` (a built-in name, one of `extra`, or `module:function`), refusing options in `given` that do
    not apply to it. `extra` are graders built by `cls(params, parse)` beyond the deterministic ones (the judge)."""
    if parse and parse not in PARSE_MODES:
        raise GraderError(f"benchmark.params.parse: {parse!r} is not one of {', '.join(PARSE_MODES)} "
                          "(or '' for the grader's own)")
    known = {**BUILTIN, **{g.name: g for g in extra}}
    every = (*ALL, *extra)
    cls: type[Grader] | None = Function if ":" in name else known.get(name)
    if cls is None:
        also = "or module:function for your own"
        raise GraderError(f"benchmark.params.grader: {unknown('grader', name, known, also)}")
    options = {o for g in every for o in g.options}
    for option in given:
        if option in options and option not in cls.options:
            users = ["module:function" if g is Function else g.name for g in every if option in g.options]
            raise GraderError(f"benchmark.params.{option}: applies to the {' and '.join(users)} grader"
                              f"{'s' if len(users) > 1 else ''}, not {name!r}")
    if cls is Function:
        return Function(params, parse, ref=name)
    return cls(params, parse)
