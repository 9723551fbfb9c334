"""`evoarena trace` (each matching call's exact messages and response) and `calls_command` (the filtered ledger)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from evoarena.cli.common import JsonOpt, RunDirArg, emit_json, err, fail, open_run, out, resolve_cell
from evoarena.cli.fit import Col, WideOpt, fitted, show
from evoarena.codec import to_plain
from evoarena.spec import INT64_MAX
from evoarena.store import (
    CallRow,
    Conversation,
    RunStore,
    TextMessage,
    attempt_answer,
    attempt_call_id,
    conversation,
    conversation_of,
    find_calls,
    queries,
)
from evoarena.store.calls import INTERRUPTED
from evoarena.store.view_trace import episode

CellOpt = Annotated[
    str | None, typer.Option("--cell", help="A cell name; when no call has that cell, every cell starting with it.")
]
TaskOpt = Annotated[
    str | None,
    typer.Option("--task", help="Calls behind attempts on this task id, or whose unit key names it."),
]
RoleOpt = Annotated[str | None, typer.Option("--role", help="Only calls of this role (solver, reflector, …).")]
PhaseOpt = Annotated[str | None, typer.Option("--phase", help="Only calls of this phase (practice, select, test).")]
AttemptOpt = Annotated[int | None, typer.Option("--attempt", min=0, max=INT64_MAX,
                                                help="The call behind this attempt row id.")]

NOT_KEPT = "(texts not kept: this call was recorded before the run store kept call texts)"


def _select(
    store: RunStore,
    *,
    cell: str | None,
    task: str | None,
    role: str | None,
    phase: str | None,
    attempt: int | None,
    limit: int,
) -> list[CallRow]:
    """The last `limit` matching calls, oldest first; a one-line error for an attempt that links to no call."""
    if attempt is not None:
        try:
            if attempt_call_id(store, attempt) is None:
                fail(f"attempt {attempt} links to no call (its row carries no call_id)")
        except KeyError:
            fail(f"no attempt {attempt} in {store.run_dir}")
    return find_calls(
        store, cell=cell, cell_match="auto", role=role, task=task, attempt=attempt, phase=phase, limit=limit
    )


def _header(c: CallRow) -> str:
    cached = "yes" if c.cached else "no"
    return (
        f"call {c.id} · cell {c.cell} · unit {c.unit} · phase {c.phase} · role {c.role} · model {c.model_id}"
        f" · cached {cached} · tokens {c.input_tokens} in / {c.output_tokens} out"
        + (f" ({c.input_tokens_evaluated} computed)" if c.input_tokens_evaluated is not None else "")
        + (f" · prompt {c.prompt_format}" if c.prompt_format else "")
    )


def _calls(calls: list[dict[str, str]] | None) -> str:
    """The tool calls a message or response carries, one line each (function calling)."""
    return "".join(f"\n[tool call {c.get('id')}] {c.get('name')} {c.get('arguments')}" for c in calls or [])


def _role(m: TextMessage) -> str:
    return m.role if m.tool_call_id is None else f"{m.role} (result of {m.tool_call_id})"


def _print_plain(conv: Conversation) -> None:
    w = sys.stdout.write
    w(f"=== {_header(conv.call)}\n")
    if conv.messages is None:
        w(NOT_KEPT + "\n\n")
        return
    for m in conv.messages:
        w(f"--- {_role(m)}\n{m.content}{_calls(m.tool_calls)}\n")
    if conv.response is not None:
        w(f"--- response (finish: {conv.response.finish_reason})\n{conv.response.text}"
          f"{_calls(conv.response.tool_calls)}\n")
    else:
        w(f"--- no response: {conv.call.error or 'none kept'}\n")
    w("\n")


def _print_rich(conv: Conversation) -> None:
    out.print(Text(_header(conv.call), style="bold cyan"))
    if conv.messages is None:
        out.print(Text(NOT_KEPT, style="yellow"))
        return
    for m in conv.messages:
        out.print(Panel(Text(m.content + _calls(m.tool_calls)), title=f"[bold]{escape(_role(m))}[/]",
                        title_align="left", border_style="blue"))
    if conv.response is not None:
        title = f"[bold]response[/] · finish: {escape(str(conv.response.finish_reason))}"
        body = conv.response.text + _calls(conv.response.tool_calls)
        out.print(Panel(Text(body), title=title, title_align="left", border_style="green"))
    else:
        out.print(
            Panel(
                Text(conv.call.error or "none kept"),
                title="[bold]no response[/]",
                title_align="left",
                border_style="red",
            )
        )


EpisodeOpt = Annotated[int | None, typer.Option(
    "--episode", min=1, max=INT64_MAX, help="An episode's steps (action, score, observation, the solver's reply): its "
    "attempt row id; with --cell, the cell's N-th episode (1-based) of --phase (practice unless given).")]


def trace(
    run_dir: RunDirArg,
    cell: CellOpt = None,
    task: TaskOpt = None,
    role: RoleOpt = None,
    attempt: AttemptOpt = None,
    phase: PhaseOpt = None,
    episode: EpisodeOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=INT64_MAX,
                                       help="At most this many calls (the last ones matching).")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """The matching calls' exact messages and responses (cached calls too), oldest first; or, with `--episode`, an
    episode of an interactive benchmark step by step."""
    store = open_run(run_dir)
    if episode is not None:
        if task is not None or role is not None or attempt is not None or (phase is not None and cell is None):
            fail("--episode takes --cell and --phase only (the N-th episode of a cell's phase), or an attempt id alone")
        _episode(store, episode if cell is None else _nth_episode(store, cell, phase or "practice", episode), as_json)
        return
    rows = _select(store, cell=cell, task=task, role=role, phase=phase, attempt=attempt, limit=limit)
    convs = [conversation_of(store, r) for r in rows]
    if as_json:
        emit_json([c.trace_record() for c in convs])
        return
    if not convs:
        err.print("no calls match")
        return
    printer = _print_rich if out.is_terminal else _print_plain
    for c in convs:
        printer(c)


def _nth_episode(store: RunStore, cell: str, phase: str, n: int) -> int:
    """The attempt id of a cell's `n`-th episode (1-based) in `phase`; the cell by name or unique prefix."""
    name = resolve_cell(store, cell)
    ids = queries.phase_attempt_ids(store, name, phase)
    if not 1 <= n <= len(ids):
        fail(f"cell {name} has {len(ids)} {phase} episodes; --episode takes 1 to {len(ids)} with --cell")
    return ids[n - 1]


def _episode(store: RunStore, attempt_id: int, as_json: bool) -> None:
    """An episode attempt's trace: per step the action, the score after it, what came back, the solver's reply and
    an episode agent's note (JitRL: each option's prior > final score, the pick, the neighbours retrieved)."""
    try:
        answer = attempt_answer(store, attempt_id)
    except KeyError:
        fail(f"no attempt {attempt_id} in {store.run_dir}")
        return
    not_episode = f"attempt {attempt_id} is not an episode with a trace (an interactive benchmark's attempt)"
    if as_json:
        try:
            steps = json.loads(answer or "")["trace"]
        except (ValueError, KeyError, TypeError):
            fail(not_episode)
            return
        found = {s["call_id"]: conversation(store, s["call_id"]) for s in steps if s.get("call_id") is not None}
        convs = {k: v for k, v in found.items() if v is not None}
        emit_json([{**s, "call": convs[s["call_id"]].trace_record() if s.get("call_id") in convs else None}
                   for s in steps])
        return
    shown = episode(store, answer)  # the steps as the viewer's trace page reads them
    if shown is None:
        fail(not_episode)
        return
    noted = any(st.note for st in shown.steps)  # an episode agent's notes: its `summary`, else the note itself
    t = Table(title=f"episode of attempt {attempt_id}: {len(shown.steps)} steps")
    for col in ("step", "kind", "reply", "action", "score", "observation", *(("agent",) if noted else ())):
        t.add_column(col, overflow="fold")
    for st in shown.steps:
        score = "" if st.score is None else f"{st.score:g}"
        t.add_row(str(st.step), st.kind, st.reply[:60], st.action, score, " ".join(st.observation.split())[:120],
                  *((st.note[:160],) if noted else ()))
    out.print(t)


def calls_command(
    run_dir: RunDirArg,
    cell: CellOpt = None,
    task: TaskOpt = None,
    role: RoleOpt = None,
    phase: PhaseOpt = None,
    limit: Annotated[int, typer.Option(min=1, max=INT64_MAX,
                                       help="At most this many calls (the last ones matching).")] = 50,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """The call ledger, newest last (filtered by cell, task, role or phase). While the run runs, a call still in
    flight shows as pending (its ledger row is written before the call is sent)."""
    store = open_run(run_dir)
    rows = _select(store, cell=cell, task=task, role=role, phase=phase, attempt=None, limit=limit)
    if as_json:
        emit_json(to_plain(rows))
        return
    live = (store.run() or {}).get("status") == "running"
    cols = (Col("id", justify="right"), Col("cell"), Col("unit", drop=2), Col("phase", drop=1), Col("role"),
            Col("model_id", drop=5), Col("in", justify="right"), Col("out", justify="right"),
            Col("latency", drop=3, justify="right"), Col("cached", drop=4), Col("error", fold=True))
    shown = [(str(r.id), str(r.cell), str(r.unit), str(r.phase), r.role, r.model_id, str(r.input_tokens),
              str(r.output_tokens), f"{r.latency_s:.2f}", "yes" if r.cached else "", _error(r, live))
             for r in rows]
    show(fitted(cols, shown, title=f"last {len(rows)} calls", wide=wide), wide)


def _error(r: CallRow, live: bool) -> str:
    """A call's error cell: "pending" for a call a running run is still waiting on, else its error (cut)."""
    if r.error == INTERRUPTED and live:
        return "pending"
    return (r.error or "")[:40]
