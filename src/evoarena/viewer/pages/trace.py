"""The trace pages: an attempt (its grader feedback, answer, execution output, the harness version it ran with,
the exact conversation of its call, an episode step by step, the other calls of its unit) and one ledger call (its
exact messages and response: the page a method step's calls link to)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.store.calls import conversation
from evoarena.store.view_lineage import unit_versions
from evoarena.store.view_tasks import task_texts
from evoarena.store.view_trace import attempt, call_attempts, episode, neighbours, output_text, unit_calls
from evoarena.viewer.pages.common import header, run_store
from evoarena.viewer.pages.paging import row_id
from evoarena.viewer.render import page


def attempt_page(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    a = attempt(store, row_id(request))
    if a is None:
        raise HTTPException(404, f"no attempt {request.path_params['id']} in run {run_id!r}")
    conv = conversation(store, a.call_id) if a.call_id is not None else None
    output, cut = output_text(store, a.output_blob)
    return page(request, "trace.html.j2", run=header(run_id, store), a=a, conv=conv, output=output, output_cut=cut,
                episode=episode(store, a.answer), unit_calls=unit_calls(store, a.cell, a.unit_key),
                task=task_texts(store, [a.task_id]).get(a.task_id))


def call_page(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    conv = conversation(store, row_id(request))
    if conv is None:
        raise HTTPException(404, f"no call {request.path_params['id']} in run {run_id!r}")
    c = conv.call
    prev, nxt = neighbours(store, c.id)
    return page(request, "trace_call.html.j2", run=header(run_id, store), conv=conv, c=c, prev=prev, next=nxt,
                attempts=call_attempts(store, c.cell, c.id),
                unit_calls=unit_calls(store, c.cell, c.unit) if c.cell and c.unit else [],
                made=unit_versions(store, c.cell, c.unit) if c.cell and c.unit and c.role != "solver" else [])


ROUTES = [Route("/run/{run}/attempt/{id}", attempt_page, name="trace_attempt"),
          Route("/run/{run}/call/{id}", call_page, name="trace_call")]
