"""Declared params: a `Params` model validates a spec's values, each problem one line naming the field; a class
with only a plain `defaults` dict gets a model built from it."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import Field

from evoarena.api import Method, ParamError, Params, TaskView, check_params
from evoarena.api.params import params_from_defaults
from evoarena.codec import to_plain


class Knobs(Params):
    mode: Literal["fast", "slow"] = Field("fast", description="How hard to try.")
    rounds: int = Field(3, ge=1, le=10, description="Update rounds per step.")
    names: tuple[str, ...] = Field(("a",), strict=False, description="Names to keep.")  # a list from YAML


@pytest.mark.parametrize(("given", "message"), [
    ({"round": 2}, "k: unknown param 'round' — did you mean 'rounds'? (known: mode, names, rounds)"),
    ({"mode": "medium"}, "k.mode: 'medium' is not one of fast, slow"),
    ({"mode": "fats"}, "k.mode: 'fats' is not one of fast, slow — did you mean 'fast'?"),
    ({"rounds": 0}, "k.rounds: must be at least 1 (got 0)"),
    ({"rounds": 11}, "k.rounds: must be at most 10 (got 11)"),
    ({"rounds": "3"}, "k.rounds: must be an integer (got '3')"),  # no conversion from text
    ({"rounds": True}, "k.rounds: must be an integer (got True)"),
])
def test_each_problem_is_one_line_naming_the_field(given: dict[str, Any], message: str) -> None:
    with pytest.raises(ParamError) as err:
        check_params("k", Knobs, given)
    assert str(err.value) == message


def test_valid_params_are_the_model_with_defaults_filled_in_and_dump_as_json() -> None:
    p = check_params("k", Knobs, {"rounds": 5, "names": ["x", "y"]})
    assert (p.mode, p.rounds, p.names) == ("fast", 5, ("x", "y"))
    assert to_plain(p) == {"mode": "fast", "rounds": 5, "names": ["x", "y"]}  # declaration order, JSON values


@pytest.mark.parametrize(("params", "ok"), [
    ({"n": 3}, True), ({"n": True}, False), ({"n": 2.5}, False),
    ({"x": 1}, True), ({"x": 0.5}, True), ({"x": "0.5"}, False),
    ({"flag": False}, True), ({"flag": 1}, False),
    ({"names": ["b"]}, True), ({"names": "a"}, False),
    ({"anything": {"k": 1}}, True), ({"n": None}, True),
])
def test_a_plain_defaults_dict_takes_each_type_from_its_default(params: dict[str, object], ok: bool) -> None:
    defaults = {"n": 1, "x": 1.0, "flag": True, "names": ["a"], "anything": None}
    model = params_from_defaults("M", defaults)
    if ok:
        got = check_params("m", model, params)
        assert to_plain(got) == {**defaults, **params}  # the values as given (an int for a float stays an int)
        assert all(got[k] == v for k, v in params.items())  # read as a dict, as the class was written
    else:
        with pytest.raises(ParamError, match=r"^m\.\w+: must be "):
            check_params("m", model, params)


class Plain(Method):
    """An older user's method: plain defaults, read by name."""

    name = "plain"
    defaults = {"k": 3}

    def practice(self, ctx: Any, task: TaskView) -> None:
        return None


class Typed(Method):
    name = "typed"

    class Params(Params):
        k: int = Field(3, ge=1, description="How many.")

    params: Params

    def practice(self, ctx: Any, task: TaskView) -> None:
        return None


def test_a_method_with_plain_defaults_keeps_working() -> None:
    method = Plain(k=5)
    assert method.params["k"] == 5 and method.params.k == 5
    assert Plain.defaults == {"k": 3}
    with pytest.raises(ParamError, match=r"^methods\.plain\.params: unknown param 'kk' — did you mean 'k'\?"):
        Plain(kk=1)


def test_a_typed_method_lists_its_defaults_and_takes_every_methods_update_note() -> None:
    assert Typed.defaults == {"k": 3}
    method = Typed(k=2, update_note="be brief")
    assert method.params.k == 2 and to_plain(method.params) == {"k": 2}  # the note is the cell's, from the spec
    with pytest.raises(ParamError, match=r"^methods\.typed\.params\.update_note: expected a string, got int 1$"):
        Typed(update_note=1)
    with pytest.raises(ParamError, match=r"^methods\.typed\.params\.k: must be at least 1"):
        Typed(k=0)
    with pytest.raises(ParamError, match=r"did you mean 'update_note'\?"):
        Typed(update_notes="x")
