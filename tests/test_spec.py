from pathlib import Path

import pytest

from evoarena.spec import SpecError, load_spec, parse_spec

BASE = {
    "name": "t",
    "benchmark": {"name": "arith"},
    "methods": [{"name": "frozen"}],
    "models": {"m": {"backend": "scripted", "model": "echo"}},
    "roles": {"solver": "m"},
}


def test_valid_spec_parses_and_hash_is_stable() -> None:
    a, b = parse_spec(BASE), parse_spec(dict(BASE))
    assert a.spec_hash() == b.spec_hash()
    assert a.derived_evidence() == "mechanism"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"models": {"m": {"backend": "nope"}}}, "models.m.backend"),
        ({"roles": {"solver": "ghost"}}, "roles.solver"),
        ({"seeds": []}, "seeds"),
        ({"methods": [{"name": "frozen", "bogus": 1}]}, "methods.0.bogus"),
        ({"models": {"m": {"backend": "openai", "model": "x"}}}, "base_url"),
    ],
)
def test_malformed_spec_gives_one_line_error_naming_the_field(patch: dict, field: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec({**BASE, **patch})
    msg = str(err.value)
    assert "\n" not in msg
    assert field in msg


def test_load_spec_reports_bad_yaml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_spec(bad)
    with pytest.raises(SpecError, match="no such file"):
        load_spec(tmp_path / "missing.yaml")


def test_with_model_maps_every_role() -> None:
    spec = parse_spec({**BASE, "models": {**BASE["models"], "g": {"backend": "embedded"}},
                       "roles": {"solver": "g", "reflector": "g"}})
    assert spec.derived_evidence() == "scaled"
    scripted = spec.with_model("scripted")
    assert set(scripted.roles.values()) == {"m"}
    assert scripted.derived_evidence() == "mechanism"
    with pytest.raises(SpecError, match="--model"):
        spec.with_model("unknown")


def test_with_model_maps_a_methods_own_roles_too() -> None:
    spec = parse_spec({**BASE, "models": {**BASE["models"], "g": {"backend": "embedded"}},
                       "methods": [{"name": "frozen"}, {"name": "reflexion", "roles": {"solver": "g", "update": "g"}}]})
    scripted = spec.with_model("scripted")
    assert [scripted.roles_for(m) for m in scripted.methods] == [{"solver": "m"}, {"solver": "m", "update": "m"}]
    assert scripted.derived_evidence() == "mechanism"
