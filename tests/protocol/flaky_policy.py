"""A scripted student behind an 'endpoint' that is down while a flag file exists (for outage tests)."""

import os
from collections.abc import Sequence
from pathlib import Path

from evoarena.models import GenParams, Message, ProviderError
from evoarena.scripted.arith import arith_student


def flaky_student(messages: Sequence[Message], params: GenParams) -> str:
    flag = os.environ.get("EVOARENA_TEST_OUTAGE_FLAG")
    if flag and Path(flag).exists():
        raise ProviderError("HTTP 503 service unavailable", retryable=True, status=503)
    return arith_student(messages, params)
