"""A reflector that never reflects (it asks for input, as the small models of issue 11 §5 did), importable as
`refusing_policy:refuser`."""

from collections.abc import Sequence

from evoarena.models import GenParams, Message


def refuser(messages: Sequence[Message], params: GenParams) -> str:
    return "Certainly! Please provide the question and the feedback."
