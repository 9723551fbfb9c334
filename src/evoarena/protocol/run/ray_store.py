"""A remote worker's store: a private copy of one cell's part of the run, which sends what it records to the driver as
it lands — a finished unit's rows in one message, a billed call's ledger row when it is written ahead of the call and
again when the call returns — so the driver's store is the run's only record and a lost worker loses only the unit
it was in (as a killed local run does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evoarena.store import AttemptRow, RunStore
from evoarena.store.texts import RequestMessage, TextResponse
from evoarena.store.transfer import call_rows, loose_rows, unit_rows

#: Sends one message to the driver: ("rows", Rows) | ("drop_call", the worker's call id) | ("progress", ...).
Send = Callable[[str, Any], None]


class WorkerStore(RunStore):
    """A `RunStore` in a private directory whose writes of consequence are also sent to the driver."""

    def __init__(self, run_dir: Path, send: Send) -> None:
        super().__init__(run_dir)
        self._send = send
        self._last_loose_event = 0

    def finish_unit(self, cell: str, key: str, result: dict[str, Any], attempts: Sequence[AttemptRow]) -> None:
        super().finish_unit(cell, key, result, attempts)
        self._send("rows", unit_rows(self, cell, key))

    def record_call(self, *, request: Sequence[RequestMessage] | None = None, response: TextResponse | None = None,
                    **row: Any) -> int:
        call_id = super().record_call(request=request, response=response, **row)
        self._send("rows", call_rows(self, [call_id]))
        return call_id

    def finish_call(self, call_id: int, *, response: TextResponse | None = None, **row: Any) -> None:
        super().finish_call(call_id, response=response, **row)
        self._send("rows", call_rows(self, [call_id]))

    def drop_call(self, call_id: int) -> None:
        super().drop_call(call_id)
        self._send("drop_call", call_id)

    def upsert_cell(self, cell: str, **row: Any) -> None:
        super().upsert_cell(cell, **row)
        self.send_loose(cell)

    def send_loose(self, cell: str) -> None:
        """Send the cell's row and the events recorded outside any unit since the last time."""
        rows, self._last_loose_event = loose_rows(self, cell, after_event=self._last_loose_event)
        self._send("rows", rows)

