"""The schedules a cell can run, each registered for the `evoarena.api` schedule a benchmark names."""

from evoarena.protocol.run.schedules.base import CellInputs, CellSchedule, Lane, Outcome, Unit, schedule_for
from evoarena.protocol.run.schedules.curriculum import CurriculumSchedule
from evoarena.protocol.run.schedules.practice_select_test import PracticeSelectTestSchedule

__all__ = ["CellInputs", "CellSchedule", "CurriculumSchedule", "Lane", "Outcome", "PracticeSelectTestSchedule",
           "Unit", "schedule_for"]
