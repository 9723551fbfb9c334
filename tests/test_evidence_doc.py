"""Each method page's "What real models show" block is generated from docs/findings.md. Under every `## N.` heading a
comment declares what the section shows of each method it involves, one line each —
`method | scaled|mechanism | models | summary` — or `<!-- evidence: none (why) -->`. The block on a page
(`<!-- evidence: method gepa -->` … `<!-- /evidence -->`) must equal what those lines give today;
`EVOARENA_WRITE_DOCS=1 pytest tests/test_evidence_doc.py` rewrites the blocks."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from evoarena.protocol import catalog

DOCS = Path(__file__).resolve().parents[1] / "docs"
FINDINGS = DOCS / "findings.md"
METHOD_PAGES = DOCS / "methods"
SECTION = re.compile(r"^## (\d+)\. (.+)\n", re.M)
DECLARATION = re.compile(r"<!-- evidence(?:: (?P<none>none\b[^\n]*?) -->|\n(?P<body>.*?)\n-->)\n", re.S)
BLOCK = re.compile(r"(<!-- evidence: method ([\w.]+) -->\n)(.*?)(<!-- /evidence -->)", re.S)
MODELS = {
    "1.5B": "Qwen2.5-Coder-1.5B-Instruct",
    "0.5B": "Qwen2.5-Coder-0.5B-Instruct",
    "270M": "Gemma 3 270M",
    "none": "no model",
}
"""The keys a declaration names its models by, and the names findings.md gives them."""
LEVELS = ("scaled", "mechanism")
NUMBER = re.compile(r"\d+\.\d+|\d+/\d+")
SETTING = re.compile(r"`(\w+): (\w+)`")
STALE = re.compile(r"no `?scaled`?( or `?replication`?)? results", re.I)


@dataclass(frozen=True)
class Row:
    """What one findings section shows of one method."""

    number: int
    title: str
    text: str
    method: str
    level: str
    models: tuple[str, ...]
    summary: str


def sections(text: str) -> list[tuple[int, str, str]]:
    """(number, title, text up to the next `## ` heading) of every numbered section."""
    heads = list(SECTION.finditer(text))
    ends = [h.start() for h in heads[1:]] + [len(text)]
    out = []
    for head, end in zip(heads, ends, strict=True):
        body = text[head.end() : end]
        nxt = re.search(r"^## ", body, re.M)
        out.append((int(head.group(1)), head.group(2).strip(), body[: nxt.start()] if nxt else body))
    return out


def declared(text: str) -> list[Row]:
    """Every declared row, in section order; a section without a well-formed declaration is an error."""
    rows: list[Row] = []
    for number, title, body in sections(text):
        m = DECLARATION.match(body)
        if not m:
            raise ValueError(f"findings §{number} has no `<!-- evidence` declaration under its heading")
        rest = body[m.end() :]
        for line in (m.group("body") or "").splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 4 or not all(parts):
                raise ValueError(f"findings §{number}: not `method | level | models | summary`: {line!r}")
            method, level, models, summary = parts
            names = tuple(n.strip() for n in models.split(","))
            if level not in LEVELS or any(n not in MODELS for n in names):
                raise ValueError(f"findings §{number}: level {level!r} or models {models!r} unknown")
            rows.append(Row(number, title, rest, method, level, names, summary))
    return rows


def anchor(title: str) -> str:
    """The heading's anchor as GitHub renders it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def shown_title(title: str) -> str:
    """The title without the planning note its parenthesis may carry ("issue 14; ")."""
    title = re.sub(r"issue \d+(; )?|; issue \d+", "", title)
    return re.sub(r" \(\)", "", title)


def render(method: str, rows: list[Row]) -> str:
    """The block's lines for one method."""
    mine = [r for r in rows if r.method == method]
    head = "_Generated from the declarations under docs/findings.md's headings (`tests/test_evidence_doc.py`)._\n\n"
    if not mine:
        return head + f"None yet: no docs/findings.md section involves `{method}`.\n"
    lines = []
    for r in mine:
        link = f"[§{r.number}. {shown_title(r.title)}](../findings.md#{anchor(f'{r.number}. {r.title}')})"
        models = " and ".join(MODELS[m] for m in r.models)
        lines.append(f"- {link} — **{r.level}**, {models}: {r.summary}.\n")
    return head + "".join(lines)


def _rows() -> list[Row]:
    return declared(FINDINGS.read_text("utf-8"))


def _method_names() -> set[str]:
    return {e.name for e in catalog.entries("method")}


def _pages() -> list[Path]:
    return sorted(p for p in METHOD_PAGES.glob("*.md") if p.stem in _method_names())


def _regenerate(path: Path, rows: list[Row]) -> str:
    def block(m: re.Match[str]) -> str:
        return f"{m.group(1)}{render(m.group(2), rows)}{m.group(4)}"

    return BLOCK.sub(block, path.read_text("utf-8"))


@pytest.mark.parametrize("path", _pages(), ids=lambda p: p.name)
def test_each_evidence_block_is_what_findings_declares(path: Path) -> None:
    """The block lists every findings row declared for the page's method, and nothing else."""
    fresh = _regenerate(path, _rows())
    if os.environ.get("EVOARENA_WRITE_DOCS"):
        path.write_text(fresh, "utf-8")
    assert path.read_text("utf-8") == fresh, f"{path.name}: run EVOARENA_WRITE_DOCS=1 pytest {__file__}"


def test_every_method_page_has_one_block_for_its_method() -> None:
    """A method with a page shows its evidence there exactly once, under its own name."""
    for path in _pages():
        names = [m.group(2) for m in BLOCK.finditer(path.read_text("utf-8"))]
        assert names == [path.stem], f"{path.name}: evidence blocks {names}, want [{path.stem!r}]"


def test_every_findings_section_declares_known_methods_levels_and_models() -> None:
    """Every section declares; each row names a registered method once per section, and model-free work (no model,
    or a heading that says "model-free") is `mechanism` while a real model's is `scaled`."""
    rows, known, text = _rows(), _method_names(), FINDINGS.read_text("utf-8")
    assert {n for n, _, _ in sections(text)} == set(range(1, len(sections(text)) + 1))
    for r in rows:
        assert r.method in known, f"§{r.number}: {r.method} is not a registered method"
        assert (r.level == "mechanism") == (r.models == ("none",)), f"§{r.number} {r.method}: level vs models"
        assert "model-free" not in r.title or r.level == "mechanism", f"§{r.number} {r.method}: model-free, scaled"
    pairs = [(r.number, r.method) for r in rows]
    assert len(pairs) == len(set(pairs)), "a method is declared twice in one section"
    for key, name in MODELS.items():
        assert key == "none" or name in text, f"findings.md never names {name}"


def test_summaries_quote_the_numbers_of_their_section() -> None:
    """Every decimal and every k/n in a summary appears in its section's text: a summary restates findings, it does
    not compute or round."""
    for r in _rows():
        stated = set(NUMBER.findall(r.text))
        for number in NUMBER.findall(r.summary):
            assert number in stated, f"§{r.number} {r.method}: {number} is not in the section"


def test_settings_a_summary_names_are_options_of_that_method() -> None:
    """`key: value` in a summary (the setting a run used) is a valid value of the method's typed params."""
    for r in _rows():
        for key, value in SETTING.findall(r.summary):
            params = catalog.method_class(r.method).Params
            assert key in params.model_fields, f"§{r.number} {r.method}: no param {key}"
            params.model_validate({key: value})


def test_runs_under_a_setting_that_is_no_longer_the_default_say_so() -> None:
    """Findings §12 (TextWorld) ran EvoTest with what is now `score_scale: unit` (docs/methods/evotest.md, "The score
    UCB reads"), §7 ran Meta-Harness with what is now `parent: best` (docs/methods/meta_harness.md, Evidence), §2 ran
    GEPA under `fences: strict` (findings §2's last paragraph); each is not the default, and the method's row says
    so."""
    carried = {
        (12, "evotest"): ("score_scale", "unit"),
        (7, "meta_harness"): ("parent", "best"),
        (2, "gepa"): ("fences", "strict"),
    }
    rows = {(r.number, r.method): r for r in _rows()}
    for (number, method), (key, value) in carried.items():
        assert f"`{key}: {value}`" in rows[number, method].summary, f"§{number} {method} must say `{key}: {value}`"
        assert getattr(catalog.method_class(method).Params(), key) != value, f"{method}: {key}: {value} is the default"


def test_no_method_page_says_it_has_no_scaled_results() -> None:
    """The generated block is the one statement of a page's real-model evidence; prose saying "no scaled results"
    goes stale as soon as findings gains a row."""
    for path in _pages():
        prose = BLOCK.sub("", path.read_text("utf-8"))
        assert not STALE.search(prose), f"{path.name}: {STALE.search(prose)}"


FAKE = """# Findings

## 1. A study (issue 3; one seed)
<!-- evidence
gepa | scaled | 1.5B | test 0.521 (0.313–0.708)
-->

Body 0.521, 0.313–0.708.

## 2. A replay (model-free)
<!-- evidence: none (no method) -->

Text.
"""


def test_the_parser_reads_rows_and_refuses_a_section_without_a_declaration() -> None:
    """The rows of a small findings file; a heading with no declaration, or a malformed row, is a one-line error."""
    (row,) = declared(FAKE)
    assert (row.number, row.method, row.level, row.models) == (1, "gepa", "scaled", ("1.5B",))
    assert "Body 0.521" in row.text and "evidence" not in row.text
    assert render("gepa", [row]).splitlines()[-1] == (
        "- [§1. A study (one seed)](../findings.md#1-a-study-issue-3-one-seed) — **scaled**, "
        "Qwen2.5-Coder-1.5B-Instruct: test 0.521 (0.313–0.708)."
    )
    assert "None yet" in render("ace", [row])
    with pytest.raises(ValueError, match="§2 has no"):
        declared(FAKE.replace("<!-- evidence: none (no method) -->\n", ""))
    with pytest.raises(ValueError, match="§1: level 'replicated'"):
        declared(FAKE.replace("| scaled |", "| replicated |"))
    with pytest.raises(ValueError, match="not `method"):
        declared(FAKE.replace("gepa | scaled | 1.5B | ", "gepa | scaled | "))
