"""The evidence label every plot and chart carries, and its colour (red for mechanism evidence)."""

from __future__ import annotations

MECHANISM_LABEL = "evidence: mechanism \u2014 scripted model, not a language-model result"


def evidence_label(evidence: str) -> str:
    """The label every plot title carries."""
    return MECHANISM_LABEL if evidence == "mechanism" else f"evidence: {evidence}"


def evidence_color(evidence: str) -> str:
    """The title colour that goes with the label: red for mechanism evidence."""
    return "#b00020" if evidence == "mechanism" else "black"
