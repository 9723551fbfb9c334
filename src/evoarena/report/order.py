"""The spec's condition order as a sort key: the report's tables, curves and the viewer list conditions the way the
spec names them (the baseline first), conditions the spec does not name after all of them."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def spec_rank(order: Sequence[str]) -> Callable[[str], int]:
    """A condition's place in `order`; len(order) for one not in it."""
    place = {c: i for i, c in enumerate(order)}
    return lambda condition: place.get(condition, len(place))
