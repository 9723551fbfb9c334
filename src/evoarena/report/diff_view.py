"""A unified diff's lines classed for display (report.html's harness section, the viewer's version page)."""

from __future__ import annotations

import re


def diff_lines(text: str) -> list[tuple[str, str]]:
    """A unified diff's lines with their CSS class: `file` (the ---/+++ headers), `hunk`, `add`, `del`, `ctx`. A
    hunk's line counts say where it ends, so a removed line that reads "-- x" is not taken for a header."""
    out: list[tuple[str, str]] = []
    old_left = new_left = 0
    for line in text.splitlines():
        if old_left > 0 or new_left > 0:
            kind = {"+": "add", "-": "del"}.get(line[:1], "ctx")
            old_left -= kind != "add"
            new_left -= kind != "del"
        elif (m := _HUNK.match(line)) is not None:
            kind = "hunk"
            old_left, new_left = int(m.group(1) or 1), int(m.group(2) or 1)
        else:
            kind = "file"
        out.append((kind, line))
    return out


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
