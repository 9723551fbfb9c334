"""Each `dspy.<Optimiser>` method's `Params` are DSPy's own arguments, named as DSPy names them, with DSPy 3.4.1's
defaults (from `inspect.signature` of the teleprompter's `__init__` and `compile`), except the few kept apart here."""

from __future__ import annotations

import inspect

import pytest

from evoarena.api.params import field_defaults
from evoarena.methods.lib_dspy.bridge import load_dspy
from evoarena.protocol.catalog import entries, method_class

OURS = {"program", "max_tokens", "seed"}
"""The program's module and the solver's room (the bridge's), and the seed (drawn from the cell when unset)."""
DIFFERENT = {("dspy.GEPA", "auto"): "light"}
"""DSPy's GEPA requires one of `auto`, `max_full_evals`, `max_metric_calls` (all None by default): ours is light."""
NAMES = sorted(e.name for e in entries("method") if e.name.startswith("dspy."))


def test_every_optimiser_is_registered() -> None:
    assert NAMES == ["dspy.BootstrapFewShot", "dspy.BootstrapFewShotWithRandomSearch", "dspy.COPRO", "dspy.GEPA",
                     "dspy.LabeledFewShot", "dspy.MIPROv2", "dspy.SIMBA"]
    assert all(method_class(n).library == "dspy" for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_params_are_dspys_arguments_with_dspys_defaults(name: str) -> None:
    """dspy/teleprompt/{bootstrap,vanilla,random_search,mipro_optimizer_v2,copro_optimizer,simba,gepa/gepa}.py:
    the `__init__` and `compile` signatures."""
    cls = getattr(load_dspy(), name.removeprefix("dspy."))
    theirs = {**inspect.signature(cls.compile).parameters, **inspect.signature(cls.__init__).parameters}
    for field, default in field_defaults(method_class(name).Params).items():
        if field in OURS:
            continue
        assert field in theirs, f"{name}.{field} is not a DSPy argument"
        expected = DIFFERENT.get((name, field), theirs[field].default)
        assert default == expected, f"{name}.{field}: {default!r}, DSPy {expected!r}"
