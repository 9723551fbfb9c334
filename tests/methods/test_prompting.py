"""Each method's prompt templates live in its own package (`prompts/<name>.md`): every template a method names is
there, every template there is named by its method, and each one parses."""

from __future__ import annotations

import ast
from importlib import resources
from pathlib import Path

import pytest

import evoarena.methods
from evoarena.methods.prompting import _env, render_prompt

ROOT = Path(evoarena.methods.__file__).parent


def _package(path: Path) -> str:
    return ".".join(("evoarena", "methods", *path.parent.relative_to(ROOT).parts))


def _named() -> list[tuple[str, str, str]]:
    """(module file, package, template name) for every `render_prompt(__package__, "<name>", …)` in the methods."""
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "render_prompt" and len(node.args) > 1
                    and isinstance(node.args[0], ast.Name) and node.args[0].id == "__package__"
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
                out.append((str(path.relative_to(ROOT)), _package(path), node.args[1].value))
    return out


def _templates() -> list[tuple[str, str]]:
    """(package, template file name) for every file in a method package's `prompts/` folder."""
    return [(_package(p.parent), p.name) for p in sorted(ROOT.glob("*/prompts/*.md"))]


def test_every_named_template_is_in_its_package() -> None:
    named = _named()
    assert len(named) > 40
    missing = [f"{where}: {name}" for where, package, name in named
               if not resources.files(package).joinpath("prompts", f"{name}.md").is_file()]
    assert not missing, missing


def test_every_template_is_named_by_its_method() -> None:
    """A template no module of its package names (directly, through a variable, or by `{% include %}`) is dead."""
    assert not (ROOT / "prompts").exists()
    dead = []
    for package, file in _templates():
        folder = ROOT.joinpath(*package.split(".")[2:])
        texts = [p.read_text("utf-8") for p in folder.rglob("*.py")]
        includes = [p.read_text("utf-8") for p in (folder / "prompts").glob("*.md")]
        stem = file.removesuffix(".md")
        if not any(f'"{stem}"' in t for t in texts) and not any(f"'{file}'" in t for t in includes):
            dead.append(f"{package}: {file}")
    assert not dead, dead


@pytest.mark.parametrize(("package", "file"), _templates())
def test_template_parses(package: str, file: str) -> None:
    assert _env(package).get_template(file) is not None


def test_templates_are_read_from_the_callers_package_only() -> None:
    shown = render_prompt("evoarena.methods.history", "context", note="Check the units.", entries=[])
    assert "Check the units." in shown
    with pytest.raises(FileNotFoundError):  # reflexion's template, not history's
        render_prompt("evoarena.methods.history", "reflect", question="q", output="o", feedback="f")
    with pytest.raises(ValueError, match="no package"):
        render_prompt(None, "reflect")
