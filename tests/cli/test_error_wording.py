"""Every user-facing error is one plain sentence: an unknown name with the closest known one (`— did you mean 'X'?`)
and the known ones listed as a reader writes them, a bad value in words rather than pydantic's; never a Python list.
The helper (evoarena.wording) on its own, then a representative set of the CLI's error paths end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.wording import did_you_mean, first_error, unknown

runner = CliRunner()
SPEC: dict[str, Any] = {
    "name": "wording",
    "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 1, "n_test": 2}},
    "methods": [{"name": "frozen"}, {"name": "reflexion"}],
    "models": {"echo": {"backend": "scripted", "model": "arith-student"},
               "qwen": {"backend": "scripted", "model": "arith-student"}},
    "roles": {"solver": "echo", "reflector": "echo"},
}


def test_the_helper_names_the_closest_and_lists_the_known() -> None:
    assert unknown("model", "ech", ["echo", "qwen"]) == "unknown model 'ech' — did you mean 'echo'? (known: echo, qwen)"
    assert unknown("model", "zzz", ["echo"], "or a path") == "unknown model 'zzz' (known: echo; or a path)"
    assert did_you_mean("reflectr", ["reflector", "refiner", "solver"], n=2) == (
        " — did you mean 'reflector' or 'refiner'?")
    assert did_you_mean("x", []) == ""


class Knobs(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    rounds: int = Field(1, ge=1, le=10)
    rate: float = Field(0.5, gt=0, allow_inf_nan=False)
    mode: Literal["fast", "slow"] = "fast"
    names: list[str] = Field(default_factory=list, min_length=1)
    label: str = Field("x", min_length=1)
    flag: bool = False
    limit: int | None = None
    need: int


@pytest.mark.parametrize(("given", "loc", "phrase"), [
    ({"rounds": 0}, "rounds", "must be at least 1 (got 0)"),
    ({"rounds": 11}, "rounds", "must be at most 10 (got 11)"),
    ({"rounds": "3"}, "rounds", "must be an integer (got '3')"),
    ({"rate": 0}, "rate", "must be greater than 0 (got 0)"),
    ({"rate": float("inf")}, "rate", "must be a finite number (got inf)"),
    ({"mode": "fats"}, "mode", "'fats' is not one of fast, slow — did you mean 'fast'?"),
    ({"names": []}, "names", "needs at least 1 item"),
    ({"names": "a"}, "names", "must be a list (got 'a')"),
    ({"label": ""}, "label", "must not be empty"),
    ({"flag": "yes"}, "flag", "must be true or false (got 'yes')"),
    ({"limit": "x"}, "limit", "must be an integer (got 'x')"),
    ({}, "need", "missing (it is required)"),
    ({"need": 1, "extra": 1}, "extra", "is not a known field"),
])
def test_validation_errors_in_plain_words(given: dict[str, Any], loc: str, phrase: str) -> None:
    with pytest.raises(ValidationError) as err:
        Knobs.model_validate({"need": 1, **given} if "need" not in given and given else given)
    assert first_error(err.value) == ([loc], phrase)


@pytest.fixture
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


def _error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    for pydantic_words in ("Input should", "Field required", "Extra inputs", "Value error", "['", "type="):
        assert pydantic_words not in lines[0], lines[0]
    assert not Path("runs").exists()
    return lines[0].removeprefix("error: ")


@pytest.mark.parametrize(("setting", "message"), [
    ("roles.solver=ech", "roles.solver: unknown model 'ech' — did you mean 'echo'? (known: echo, qwen)"),
    ("methods.1.name=refelxion", "methods.1.name: unknown method 'refelxion' — did you mean 'reflexion'? (known: "),
    ("benchmark.name=arithm", "benchmark.name: unknown benchmark 'arithm' — did you mean 'arith'? (known: "),
    ("benchmark.params.n_trian=3", "benchmark.params (arith): unknown param 'n_trian' — did you mean 'n_train'? "),
    ("methods.1.params.max_trail=2", "methods.1: methods.reflexion.params: unknown param 'max_trail' — did you mean "
                                     "'max_trials'? (known: "),
    ("protocl.epochs=2", "protocl: unknown field — did you mean 'protocol'? (known: name, benchmark, "),
    ("protocol.select=bst", "protocol.select: 'bst' is not one of best, last — did you mean 'best'?"),
    ("protocol.epochs=0", "protocol.epochs: must be at least 1 (got 0)"),
    ("seeds=[1, 1]", "seeds: seed 1 is listed twice (1, 1)"),
    ("models.echo.backend=opena", "models.echo.backend: 'opena' is not one of openai, embedded, scripted — did you "
                                  "mean 'openai'?"),
])
def test_spec_errors_are_one_plain_sentence(spec_file: Path, setting: str, message: str) -> None:
    assert _error(["run", str(spec_file), "--no-probe", "--set", setting]).startswith(message)


@pytest.mark.parametrize(("args", "message"), [
    (["run", "{spec}", "--model", "embeded"], "--model: unknown model 'embeded' — did you mean 'embedded'? (known: "
                                              "echo, embedded, embedded-small, gemma, qwen, scripted; or a path to a "
                                              ".gguf)"),
    (["run", "{spec}", "--seeds", "1,-2"], "--seeds: must be at least 0 (got -2)"),
    (["run", "{spec}", "--seeds", "3,3"], "--seeds: seed 3 is listed twice (3, 3)"),
    (["list", "methodz"], "list: unknown kind 'methodz' — did you mean 'methods'? (known: "),
])
def test_option_errors_are_one_plain_sentence(spec_file: Path, args: list[str], message: str) -> None:
    assert _error([a.replace("{spec}", str(spec_file)) for a in args]).startswith(message)
