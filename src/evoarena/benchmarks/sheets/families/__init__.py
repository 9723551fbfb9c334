"""The task families of the generated sheets benchmark, by name, and reading an instruction back to its family."""

from __future__ import annotations

from evoarena.benchmarks.sheets.families import cleaning, lookups, sequences
from evoarena.benchmarks.sheets.families.base import Draw, Family, Template

FAMILIES: dict[str, Family] = {f.name: f for f in (*sequences.FAMILIES, *lookups.FAMILIES, *cleaning.FAMILIES)}
DEFAULT_FAMILIES = ["seq_scan", "lookup", "cond_agg", "pivot", "fill_down", "date_clean", "text_clean", "dedupe",
                    "running_total"]  # fmt: skip


def match_instruction(text: str) -> tuple[Family, Template, dict[str, str]] | None:
    """The family, wording and stated parameters of a generated instruction (None for any other text)."""
    for family in FAMILIES.values():
        for template in family.templates:
            params = template.match(text)
            if params is not None:
                return family, template, params
    return None


__all__ = ["DEFAULT_FAMILIES", "FAMILIES", "Draw", "Family", "Template", "match_instruction"]
