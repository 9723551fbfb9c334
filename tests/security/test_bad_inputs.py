"""Bad inputs to `evoarena run`: every numeric setting out of its range, a misspelt role, a directory or a non-UTF-8
file as the spec, each fail with exit 2 and one line naming the culprit, before anything is written (the working
directory's `runs/` stays absent); a spec name with `../` still runs, in a directory inside `runs/`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evoarena.cli import app
from evoarena.spec import safe_name

runner = CliRunner()
SPEC = {
    "name": "bad-inputs",
    "benchmark": {"name": "arith", "params": {"seed": 0, "n_train": 2, "n_val": 1, "n_test": 2}},
    "methods": [{"name": "frozen"}, {"name": "reflexion"}],
    "models": {"s": {"backend": "scripted", "model": "arith-student"}},
    "roles": {"solver": "s", "reflector": "s"},
}


@pytest.fixture
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The spec in a file, with the working directory (where `runs/` would go) a fresh one."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(SPEC))
    return path


def _fails_in_one_line(args: list[str], *expected: str) -> str:
    result = runner.invoke(app, ["run", *args, "--no-probe"])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output and "│" not in result.output
    for text in expected:
        assert text in lines[0], lines[0]
    assert not Path("runs").exists()  # nothing written: no run directory, not even runs/
    return lines[0]


@pytest.mark.parametrize(("setting", "named"), [
    ("protocol.epochs=-1", "protocol.epochs"),
    ("protocol.workers=0", "protocol.workers"),
    ("protocol.select_every=-1", "protocol.select_every"),
    ("protocol.concurrency=0", "protocol.concurrency"),
    ("protocol.method_cpu_s=0", "protocol.method_cpu_s"),
    ("models.s.timeout_s=-1", "models.s.timeout_s"),
    ("models.s.timeout_s=.nan", "models.s.timeout_s"),
    ("models.s.max_retries=-2", "models.s.max_retries"),
    ("models.s.concurrency=0", "models.s.concurrency"),
    ("models.s.n_ctx=0", "models.s.n_ctx"),
    ("models.s.price.input_per_mtok=-1", "models.s.price.input_per_mtok"),
    ("budget.max_calls=-1", "budget.max_calls"),
    ("executor.cpus_per_cell=0", "executor.cpus_per_cell"),
    ("seeds=[-1]", "seeds.0"),
    ("seeds=[0, 0]", "seeds"),
    ("gen.solver.temperature=-1", "gen.solver.temperature"),
    ("gen.solver.max_tokens=0", "gen.solver.max_tokens"),
    ("gen.solver.top_p=0.9", "gen.solver.top_p"),
])
def test_a_spec_setting_out_of_range_is_refused(spec_file: Path, setting: str, named: str) -> None:
    _fails_in_one_line([str(spec_file), "--set", setting], f"error: {named}")


@pytest.mark.parametrize(("option", "value"), [
    ("--parallel", "-3"), ("--parallel", "0"), ("--concurrency", "0"), ("--probe-threshold", "1.5"),
    ("--seeds", "-1"),
])
def test_a_cli_option_out_of_range_is_refused(spec_file: Path, option: str, value: str) -> None:
    _fails_in_one_line([str(spec_file), option, value], option)


@pytest.mark.parametrize(("setting", "named", "suggested"), [
    ("roles.reflectr=s", "roles.reflectr", "did you mean 'reflector"),
    ("roles.proposr=s", "roles.proposr", "did you mean 'proposer"),
    ("methods.1.roles.reflectr=s", "methods.1.roles.reflectr", "did you mean 'reflector"),
    ("methods.0.roles.reflector=s", "methods.0.roles.reflector", "known: solver"),  # frozen plays no reflector
    ("gen.reflectr.max_tokens=64", "gen.reflectr", "did you mean 'reflector"),
])
def test_a_misspelt_role_is_refused_with_the_closest_known(spec_file: Path, setting: str, named: str,
                                                           suggested: str) -> None:
    _fails_in_one_line([str(spec_file), "--set", setting], f"error: {named}: unknown ", suggested)


def test_a_directory_as_the_spec_is_named(spec_file: Path, tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.yaml"
    folder.mkdir()
    _fails_in_one_line([str(folder)], str(folder), "is a directory")


def test_a_non_utf8_spec_is_named(spec_file: Path, tmp_path: Path) -> None:
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes(yaml.safe_dump({**SPEC, "name": "caf\u00e9"}, allow_unicode=True).encode("latin-1"))
    _fails_in_one_line([str(latin)], str(latin), "not UTF-8", "0xe9")


def test_a_name_with_dotdot_runs_inside_runs(spec_file: Path, tmp_path: Path) -> None:
    escaping = tmp_path / "escaping.yaml"
    escaping.write_text(yaml.safe_dump({**SPEC, "methods": [{"name": "frozen"}], "name": "../../escaped"}))
    result = runner.invoke(app, ["run", str(escaping), "--no-probe", "--json"])
    assert result.exit_code == 0, result.output
    made = [p for p in Path("runs").iterdir()]
    assert len(made) == 1 and made[0].name.startswith("___.._escaped-")
    assert {p.name for p in tmp_path.iterdir()} == {"cwd", "spec.yaml", "escaping.yaml"}  # nothing beside runs/


@pytest.mark.parametrize("name", ["quickstart", "clr-methods_v2.1", "my run", "caf\u00e9", "a..b"])
def test_an_ordinary_name_keeps_its_run_dir(name: str) -> None:
    assert safe_name(name) == name


@pytest.mark.parametrize(("name", "safe"), [
    ("../x", "___x"), ("/etc/x", "_etc_x"), ("a\\b", "a_b"), ("..", "__"), (".hidden", "_hidden"),
    ("tab\there", "tab_here"), ("", "_"),
])
def test_a_name_that_could_leave_runs_is_made_safe(name: str, safe: str) -> None:
    assert safe_name(name) == safe
    assert len(safe_name("x" * 1000).encode()) <= 200
