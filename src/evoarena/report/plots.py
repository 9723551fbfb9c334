"""Matplotlib figures for report views, drawn off-screen (Agg) and returned as base64 PNG. The run's own accuracy
chart is SVG (`chart.py`); a view that draws with matplotlib imports it only when its section is built."""

from __future__ import annotations

import base64
import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .labels import MECHANISM_LABEL, evidence_color, evidence_label

__all__ = ["MECHANISM_LABEL", "evidence_color", "evidence_label", "png_base64"]


def png_base64(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    # No "Software" metadata: the PNG bytes then depend only on the figure.
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")
