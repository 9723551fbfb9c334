"""The curves page: per condition the mean score at each practice step (each episode on an interactive benchmark),
averaged over the condition's seeds, and the ledger's cumulative tokens per role in call order — inline SVG drawn on
the server (report.line_chart), from SQL aggregates (store/view_curves.py)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from evoarena.report.learning_curves import practice_curves, practice_svg, step_word, token_series
from evoarena.report.line_chart import line_svg
from evoarena.viewer.pages.common import header, run_store
from evoarena.viewer.render import page


def curves(request: Request) -> HTMLResponse:
    run_id, store = run_store(request)
    run = header(run_id, store)
    word = step_word(store)
    practice = practice_curves(store, run.conditions)
    tokens = token_series(store)
    score_svg = practice_svg(practice, word, "practice-curve")
    token_svg = line_svg(tokens, title="Cumulative tokens per role", x_label="call id (ledger order)",
                         y_label="tokens (input + output)", chart_id="token-curve", y_zero=True)
    return page(request, "curves.html.j2", run=run, word=word, practice=practice, tokens=tokens,
                score_svg=score_svg, token_svg=token_svg, status=run.row.status if run.row else "empty")


ROUTES = [Route("/run/{run}/curves", curves, name="curves")]
NAV = [("curves", "curves")]
