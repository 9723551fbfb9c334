"""The evolver's reply, read into the parts of a child configuration it may change, each checked before it is kept.

The released format (yf-he/EvoTest @f92474c, `_parse_evolution_response`): the new guiding prompt as plain text, then
the state extractor in a `<code>...</code>` block. The `prompt` scope (the paper's prompt-only arm) keeps the guiding
prompt alone and ignores any code. The `paper` scope adds a `<memory>...</memory>` block (success /
failure lessons shown to the actor) and a `<temperature>...</temperature>` block (the actor's sampling temperature).

Each part is kept or refused on its own, as released: a guiding prompt of 10 characters or fewer is not kept; an
extractor is kept only if it passes the interface check — it compiles and defines a top-level
`extract_state(game_history)` — here, without running it (it runs only in the sandbox: its smoke run is the first step
of the child's episode). Not released: a prompt or memory that is only a bracketed placeholder ("[Your generated
prompt here]", copied from the format by a small model) is refused too. A reply with nothing that can be kept is
malformed as a whole (`ReplyError`).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Literal, get_args

ENTRY = "extract_state"
MAX_CODE_CHARS = 20_000
MAX_LESSONS_CHARS = 4_000
TEMPERATURE_RANGE = (0.0, 2.0)
Scope = Literal["released", "paper", "prompt"]
"""What an evolver reply may change (`mutate`)."""
SCOPES: tuple[str, ...] = get_args(Scope)
_FENCE = re.compile(r"^```[a-zA-Z]*\n?|\n?```$")
_TAGS = ("code", "memory", "temperature", "prompt")
_PLACEHOLDER = re.compile(r"^\[[^\[\]\n]*\]$")  # "[Your generated prompt here]": the format, not an answer


class ReplyError(ValueError):
    """An evolver reply with nothing a child configuration can keep; the message says why in one line, `refused`
    names the parts the reply gave that were refused."""

    def __init__(self, message: str, refused: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class Evolved:
    """What a reply changes (None: not given, or refused) and the refused parts with their reasons."""

    prompt: str | None
    extractor: str | None
    lessons: str | None = None
    temperature: float | None = None
    refused: tuple[tuple[str, str], ...] = ()


def _block(raw: str, tag: str) -> str | None:
    """The text of the first `<tag>...</tag>` block (None when there is none)."""
    start = raw.find(f"<{tag}>")
    end = raw.find(f"</{tag}>", start + 1) if start >= 0 else -1
    if start < 0 or end < 0:
        return None
    return raw[start + len(tag) + 2:end].strip()


def _prompt(raw: str) -> str:
    """The guiding prompt: a `<prompt>` block, else the text before the first block (the released rule: the text
    before `<code>`)."""
    tagged = _block(raw, "prompt")
    if tagged is not None:
        return tagged
    cut = min([i for i in (raw.find(f"<{t}>") for t in _TAGS) if i >= 0], default=len(raw))
    return raw[:cut].strip()


def extractor_interface(source: str) -> str:
    """Why `source` is not a state extractor ("" when it is): too short or long, not Python, or no top-level
    `def extract_state(game_history)` taking one argument. Compiled only, never executed."""
    if len(source.strip()) <= 10:
        return "no state extractor code (10 characters or fewer)"
    if len(source) > MAX_CODE_CHARS:
        return f"the state extractor is longer than {MAX_CODE_CHARS} characters"
    try:
        module = ast.parse(source, filename="extract_state.py")
    except (SyntaxError, ValueError) as err:
        return f"the state extractor does not compile: {err}"
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == ENTRY:
            args = node.args
            if len(args.posonlyargs) + len(args.args) - len(args.defaults) <= 1 and (
                    len(args.posonlyargs) + len(args.args) >= 1 or args.vararg is not None):
                return ""
            return f"{ENTRY} must take one argument (the game history)"
    return f"no top-level function {ENTRY}(game_history)"


def parse_reply(raw: str, scope: str) -> Evolved:
    """The parts of `raw` a child may keep under `scope` (`released`: prompt and extractor; `paper`: also lessons and
    temperature; `prompt`: the guiding prompt only); ReplyError when there is none."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r} (one of {', '.join(SCOPES)})")
    refused: list[tuple[str, str]] = []
    prompt: str | None = _prompt(raw)
    if len(prompt or "") <= 10:
        refused.append(("guiding prompt", "no guiding prompt (10 characters or fewer)"))
        prompt = None
    elif _PLACEHOLDER.match(prompt or ""):
        refused.append(("guiding prompt", f"the guiding prompt is the format's placeholder {prompt!r}"))
        prompt = None
    code = _block(raw, "code") if scope != "prompt" else None
    extractor: str | None = None
    if code is not None:
        code = _FENCE.sub("", code.strip()).strip() + "\n"
        why = extractor_interface(code)
        if why:
            refused.append(("extract_state", why))
        else:
            extractor = code
    lessons = temperature = None
    if scope == "paper":
        lessons, temperature = _paper_parts(raw, refused)
    if prompt is None and extractor is None and lessons is None and temperature is None:
        reasons = "; ".join(why for _, why in refused) or "nothing to keep"
        raise ReplyError(f"the reply holds nothing a configuration can keep: {reasons}", tuple(refused))
    return Evolved(prompt, extractor, lessons, temperature, tuple(refused))


def _paper_parts(raw: str, refused: list[tuple[str, str]]) -> tuple[str | None, float | None]:
    lessons = _block(raw, "memory")
    if lessons is not None and (not lessons or len(lessons) > MAX_LESSONS_CHARS or _PLACEHOLDER.match(lessons)):
        refused.append(("memory", f"the memory is empty, a placeholder or longer than {MAX_LESSONS_CHARS} characters"))
        lessons = None
    text = _block(raw, "temperature")
    temperature: float | None = None
    if text is not None:
        try:
            temperature = float(text)
        except ValueError:
            temperature = math.nan
        low, high = TEMPERATURE_RANGE
        if not low <= temperature <= high:  # NaN fails too
            refused.append(("temperature", f"the temperature {text!r} is not a number from {low:g} to {high:g}"))
            temperature = None
    return lessons, temperature
