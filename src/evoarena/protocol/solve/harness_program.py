"""Harness programs: a harness whose root holds `harness.py` builds the solver's messages by running that program —
only in the sandbox, never in the runner's process (the isolated channel for model-written harness code).

The program defines `build_messages(request)`; `request` is plain JSON — `task` (the task text as the benchmark
formats it), `context` (what the method shows before the task) and `files` (the harness's own files: every file but
`harness.py` outside method-state directories `memory/<name>/`); on a step of an interactive episode also `episode`
(`start`: the first observation, `history`: every turn so far as {action, observation}, `observation`: the one now,
`steps_left`), since the task text shows only the benchmark's window of recent turns. It returns a list of
`{"role", "content"}` messages, which are checked here; anything else — an exception, a limit passed, malformed output
— is the harness's failure on that task (a parse error that scores 0), never a provider error and never a model call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from evoarena.harness.program import ENTRY, PROGRAM, program_files
from evoarena.models import Message
from evoarena.sandbox import SandboxLimits, run_python

LIMITS = SandboxLimits(wall_s=10.0, cpu_s=5, memory_mb=512, output_bytes=1 << 20, network=False)
MAX_MESSAGES = 32
MAX_CHARS = 200_000  # all messages' content together
_ROLES = frozenset({"system", "user", "assistant"})
_MARK = "\n@@evoarena-harness-messages@@\n"

# Runs as main.py next to harness.py: the program's own prints go to stderr, so only the driver writes stdout.
_DRIVER = f"""\
import contextlib, json, sys
request = json.load(sys.stdin)
with contextlib.redirect_stdout(sys.stderr):
    import harness
    messages = harness.{ENTRY}(request)
sys.stdout.write({_MARK!r} + json.dumps(messages))
"""


class HarnessProgramError(ValueError):
    """The harness program did not produce valid messages; the message says why in one line."""


def program_messages(tree: Mapping[str, str], task_text: str, context: str, limits: SandboxLimits = LIMITS, *,
                     episode: Mapping[str, Any] | None = None) -> tuple[Message, ...]:
    """Run the tree's `harness.py` in the sandbox on one task (one step of an episode: `episode` is the episode so
    far, in the request as `episode`); its checked messages, or HarnessProgramError."""
    request: dict[str, Any] = {"task": task_text, "context": context, "files": program_files(tree)}
    if episode is not None:
        request["episode"] = dict(episode)
    result = run_python(_DRIVER, stdin=json.dumps(request), files={PROGRAM: tree[PROGRAM]}, limits=limits)
    if result.limit is not None or result.timed_out:
        raise HarnessProgramError(f"harness program passed its {result.limit or 'wall'} limit")
    if result.returncode != 0:
        raise HarnessProgramError(f"harness program failed: {_last_line(result.stderr)}")
    _, mark, payload = result.stdout.partition(_MARK)
    if not mark:
        raise HarnessProgramError("harness program wrote no messages")
    try:
        raw = json.loads(payload)
    except json.JSONDecodeError as err:
        raise HarnessProgramError(f"harness program's messages are not JSON: {err}") from None
    return check_messages(raw)


def check_messages(raw: Any) -> tuple[Message, ...]:
    """A program's output as messages: a non-empty list of {role, content} (system/user/assistant, text), ending with
    a user message, within MAX_MESSAGES and MAX_CHARS."""
    if not isinstance(raw, list) or not raw:
        raise HarnessProgramError(f"{ENTRY} must return a non-empty list of messages, got {type(raw).__name__}")
    if len(raw) > MAX_MESSAGES:
        raise HarnessProgramError(f"{ENTRY} returned {len(raw)} messages (at most {MAX_MESSAGES})")
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or set(m) != {"role", "content"}:
            raise HarnessProgramError(f"message {i} must be an object with exactly `role` and `content`")
        if m["role"] not in _ROLES or not isinstance(m["content"], str):
            raise HarnessProgramError(f"message {i}: role must be system, user or assistant and content a string")
        out.append(Message(m["role"], m["content"]))
    if out[-1].role != "user":
        raise HarnessProgramError(f"{ENTRY}'s last message must be the user's")
    if sum(len(m.content) for m in out) > MAX_CHARS:
        raise HarnessProgramError(f"{ENTRY}'s messages hold more than {MAX_CHARS} characters")
    return tuple(out)


def _last_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no error output"
