"""`echo`: returns the last user message, for plumbing tests."""

from __future__ import annotations

from collections.abc import Sequence

from evoarena.api import policy
from evoarena.models import GenParams, Message


@policy("echo")
def echo_policy(messages: Sequence[Message], params: GenParams) -> str:
    """Returns the last user message: for plumbing tests."""
    users = [m.content for m in messages if m.role == "user"]
    return users[-1] if users else ""
