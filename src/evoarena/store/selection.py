"""Why a cell's selected version is the one it tested: the candidates graded on val, their means, what the budget
left ungraded, and one reason from a closed set. Made where the selection is made, stored with the cell
(`cells.selection_json`), read by the report, the CLI, `evolve()` and the viewer."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

from evoarena.codec import from_plain, to_text

TIE_RULE = "the best val mean wins; a tie keeps the earliest version (the simpler harness)"


class Reason(enum.StrEnum):
    """Why the selected version was kept."""

    BEST = "best"  # the final version, with the best val mean
    TIE = "tie"  # the final version tied the best on val: the earliest of the tied was kept
    FINAL_LOWER = "final_lower"  # the final version scored lower on val than the one kept
    FINAL_UNSCORED = "final_unscored"  # the budget could not pay for grading the final version on val
    UNCHANGED = "unchanged"  # the method never changed the initial version
    NO_VAL = "no_val"  # no val split: the last version is kept ungraded
    SELECT_LAST = "select_last"  # `protocol.select: last`: the last version is kept ungraded


@dataclass(frozen=True)
class Candidate:
    """A version selection could keep: taken after `step` practice steps (0: the initial version), with its val mean
    (None: not graded — `skipped` when the budget could not pay for it, else nothing was graded at all)."""

    version: str
    step: int
    val: float | None = None
    skipped: bool = False

    @property
    def label(self) -> str:
        return "the initial version" if self.step == 0 else f"the step-{self.step} version {self.version[:8]}"

    def scored(self) -> str:
        return f"{self.label} at {self.val:.3f}" if self.val is not None else self.label


@dataclass(frozen=True)
class Selection:
    """One cell's selection: its candidates in the order they were made (the initial version first), the last
    version practice reached (`final`, one of them), the val split's size, the version kept and why."""

    reason: Reason
    selected: str
    final_version: str
    candidates: tuple[Candidate, ...]
    n_val: int
    rule: str = TIE_RULE

    @property
    def final(self) -> Candidate:
        return next(c for c in self.candidates if c.version == self.final_version)

    @property
    def kept(self) -> Candidate:
        return next(c for c in self.candidates if c.version == self.selected)

    def text(self) -> str:
        """The reason as one line, e.g. "val tie → earliest kept (the initial version at 0.250 = the step-20 version
        3fa2b1c0 at 0.250)"."""
        kept, final = self.kept, self.final
        if self.reason is Reason.BEST:
            return f"selected {kept.scored()} on val"
        if self.reason is Reason.TIE:
            return f"val tie → earliest kept ({kept.scored()} = {final.scored()})"
        if self.reason is Reason.FINAL_LOWER:
            return f"final val lower ({final.scored()} < {kept.scored()}): {kept.label} kept"
        if self.reason is Reason.FINAL_UNSCORED:
            return f"{kept.label} kept: the final version ({final.label}) was not scored on val, the budget ran out"
        if self.reason is Reason.UNCHANGED:
            return "initial kept: the method made no new version"
        if self.reason is Reason.NO_VAL:
            return f"no val split: {kept.label} (the last) kept ungraded"
        return f"select: last — {kept.label} (the last) kept ungraded"

    def warning(self) -> str | None:
        """A line for a result the budget discarded: the final version went ungraded on val."""
        if self.reason is not Reason.FINAL_UNSCORED:
            return None
        return (f"the final version ({self.final.label}) was never scored on val: the budget ran out before "
                f"selection could grade it, so {self.kept.label} was tested instead")


def decide(candidates: tuple[Candidate, ...], final_version: str, n_val: int) -> Selection:
    """The selection over candidates (the initial version first and always graded; `final_version` the last version
    practice reached): the best val mean, the earliest on a tie, and the reason for it."""
    graded = [c for c in candidates if c.val is not None]
    best = max(c.val for c in graded if c.val is not None)
    kept = next(c for c in graded if c.val == best)  # ties: the earliest
    final = next(c for c in candidates if c.version == final_version)
    if len(candidates) == 1:
        reason = Reason.UNCHANGED
    elif final.val is None:
        reason = Reason.FINAL_UNSCORED
    elif kept is final:
        reason = Reason.BEST
    elif final.val == best:
        reason = Reason.TIE
    else:
        reason = Reason.FINAL_LOWER
    return Selection(reason, kept.version, final_version, candidates, n_val)


def ungraded(candidate: Candidate, reason: Reason) -> Selection:
    """The selection of a cell that grades nothing on val: the last version, kept for `reason`."""
    return Selection(reason, candidate.version, candidate.version, (candidate,), 0)


def selection_json(selection: Selection) -> str:
    return to_text(selection, sort_keys=True)


def read_selection(text: str | None) -> Selection | None:
    """The stored selection of a cell (None for a cell without one: a curriculum, or a store written before)."""
    return None if not text else from_plain(Selection, json.loads(text))
