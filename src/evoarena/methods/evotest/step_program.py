"""EvoTest's step prompt as a harness program: this file's text is the `harness.py` of every EvoTest configuration, so
the protocol runs it — only in the sandbox — for every step of an episode, and the evolver's `extract_state` (the
harness file `extract_state.py`, model-written) runs there and nowhere else. Standard library only: it is not imported
by evoarena; the method reads its text.

What it builds (as the released `OurAgent.get_prompts`, yf-he/EvoTest @f92474c): the system message is the task's
instructions followed by "Follow this guide: <the guiding prompt>"; the user message is the game state summary
(`extract_state` on the game history so far, in the released history format), the method's context (the paper
scope's evolved memory), up to 3 successful examples from earlier episodes retrieved by Jaccard similarity to the
current observation (the rule-based memory), then the benchmark's view of the step.

The smoke run: at the first step of an episode the extractor must run, on "" (the released check) and on the empty
game history; if it raises, this program fails, the step ends as the harness's failure without a model call, and the
method drops the extractor (docs/methods/evotest.md). Later steps swallow its errors and show no summary, as
released.
"""

from __future__ import annotations

import json
from typing import Any

INSTRUCTIONS = "instructions.md"
GUIDE = "system.md"
EXTRACTOR = "extract_state.py"
SUCCESSES = "memory/successes.jsonl"
SMOKE_FAILED = "extract_state failed its smoke run"
FEW_SHOT_HEADER = "Here are 2-3 successful examples from similar situations (learned across episodes):"


def game_history(episode: dict[str, Any]) -> str:
    """The episode's past steps in the released history format (the state each action was taken in, the action);
    the current observation is not in it yet, as in the released agent, which logs a step after acting."""
    turns = episode.get("history") or []
    states = [str(episode.get("start", ""))] + [str(t["observation"]) for t in turns]
    out = "GAME HISTORY:\n"
    for i, turn in enumerate(turns):
        out += f"Step {i + 1}:\nSTATE: {states[i]}\nACTION TAKEN: {turn['action']}\n------------\n"
    return out


def _extractor(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, EXTRACTOR, "exec"), namespace)  # noqa: S102 - in the sandbox: this is where it may run
    return namespace["extract_state"]


def state_summary(files: dict[str, str], episode: dict[str, Any]) -> str:
    """`extract_state(history)` as text ("" when it returns nothing or raises); at the first step its failure raises
    (the smoke run)."""
    source = files.get(EXTRACTOR, "")
    if not source.strip():
        return ""
    history = game_history(episode)
    if not episode.get("history"):
        try:
            extract = _extractor(source)
            extract("")
            out = extract(history)
        except Exception as err:  # noqa: BLE001 - any failure of model-written code fails the smoke run
            raise RuntimeError(f"{SMOKE_FAILED}: {type(err).__name__}: {err}"[:300]) from None
    else:
        try:
            out = _extractor(source)(history)
        except Exception:  # noqa: BLE001 - the released agent shows no summary when the extractor fails
            return ""
    return str(out) if out else ""


def tokens(text: str) -> list[str]:
    """The released tokenizer: lower case, split on whitespace, only alphabetic or alphanumeric tokens kept."""
    return [t for t in (text or "").lower().replace("\n", " ").split() if t.isalpha() or t.isalnum()]


def jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def similar(entries: list[dict[str, Any]], state: str, k: int = 3) -> list[dict[str, Any]]:
    """The `k` positive entries most similar to `state` (Jaccard over tokens, earliest first among ties), similarity
    above 0 only."""
    query = tokens(state)
    scored = sorted(((jaccard(query, tokens(str(e.get("state", "")))), e) for e in entries),
                    key=lambda pair: pair[0], reverse=True)
    return [e for sim, e in scored[:k] if sim > 0]


def few_shot(files: dict[str, str], state: str) -> str:
    entries = [json.loads(line) for line in files.get(SUCCESSES, "").splitlines() if line.strip()]
    found = similar(entries, state)
    if not found:
        return "(none)"
    lines: list[str] = []
    for e in found:
        lines += [f"STATE: {str(e.get('state', ''))[:400]}", f"ACTION: {e.get('action', '')}",
                  f"GAIN: +{e.get('delta_score', 0)}", "---"]
    return "\n".join(lines)


def build_messages(request: dict[str, Any]) -> list[dict[str, str]]:
    files: dict[str, str] = request.get("files") or {}
    episode = request.get("episode")
    system = files.get(INSTRUCTIONS, "").strip()
    guide = files.get(GUIDE, "").strip()
    if guide:
        system = f"{system}\n\nFollow this guide: {guide}".strip()
    parts: list[str] = []
    if isinstance(episode, dict):
        summary = state_summary(files, episode)
        if summary:
            parts.append(f"GAME STATE SUMMARY: {summary}")
    context = str(request.get("context") or "").strip()
    if context:
        parts.append(context)
    if isinstance(episode, dict) and SUCCESSES in files:
        parts.append(f"{FEW_SHOT_HEADER}\n{few_shot(files, str(episode.get('observation', '')))}")
    parts.append(str(request["task"]))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]
