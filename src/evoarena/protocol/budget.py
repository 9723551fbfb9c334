"""Budgets that mean what they say: attempts, model calls, tokens and dollars per cell, enforced at the call."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from evoarena.api.context import BudgetExhausted
from evoarena.spec import Budget

__all__ = ["BudgetExhausted", "BudgetMeter"]


@dataclass
class BudgetMeter:
    """Counts a cell's evolution spending. `enforce=False` counts without refusing (selection phase).
    `reserve_calls` are held back from practice (enforced limits) for selection to grade versions on val."""

    limits: Budget
    attempts: int = 0
    calls: int = 0
    tokens: int = 0
    usd: float = 0.0  # from each model's price table, as the ledger's cost_usd
    enforce: bool = True
    exhausted_by: str | None = None
    reserve_calls: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def _refuse(self, what: str) -> None:
        self.exhausted_by = what
        if self.enforce:
            raise BudgetExhausted(f"budget exhausted: {what}")

    def before_attempt(self) -> None:
        if self.limits.max_attempts is not None and self.attempts >= self.limits.max_attempts:
            self._refuse(f"max_attempts={self.limits.max_attempts}")
        self.attempts += 1

    def before_call(self) -> None:
        if self.limits.max_calls is not None:
            held = self.reserve_calls if self.enforce else 0
            if self.calls >= self.limits.max_calls - held:
                self._refuse(f"max_calls={self.limits.max_calls}" + (f" less {held} kept for val" if held else ""))
        if self.limits.max_tokens is not None and self.tokens >= self.limits.max_tokens:
            self._refuse(f"max_tokens={self.limits.max_tokens}")
        if self.limits.max_usd is not None and self.usd >= self.limits.max_usd:
            self._refuse(f"max_usd={self.limits.max_usd:g}")

    def after_call(self, tokens: int, usd: float = 0.0) -> None:
        with self._lock:
            self.calls += 1
            self.tokens += tokens
            self.usd += usd

    def exhausted(self) -> bool:
        return self.exhausted_by is not None

    def can_pay(self, calls: int) -> bool:
        """Whether the whole budget (the reserve included) has room for `calls` more calls and any tokens: what
        grading a version on val needs before it starts."""
        if self.limits.max_calls is not None and self.calls + calls > self.limits.max_calls:
            return False
        if self.limits.max_usd is not None and self.usd >= self.limits.max_usd:
            return False
        return self.limits.max_tokens is None or self.tokens < self.limits.max_tokens

    def state(self) -> dict[str, Any]:
        """What it counted; `usd` only once a priced call was made (a free model's state reads as before)."""
        usd = {"usd": self.usd} if self.usd or self.limits.max_usd is not None else {}
        return {"attempts": self.attempts, "calls": self.calls, "tokens": self.tokens, **usd,
                "exhausted_by": self.exhausted_by}

    def restore(self, state: dict[str, Any]) -> None:
        self.attempts = int(state["attempts"])
        self.calls = int(state["calls"])
        self.tokens = int(state["tokens"])
        self.usd = float(state.get("usd", 0.0))
        self.exhausted_by = state.get("exhausted_by")
