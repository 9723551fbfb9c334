"""Spreadsheet manipulation in the spirit of SpreadsheetBench: seeded task families (or the released files),
programs run in the sandbox, graded by target-cell values (hard and cell accuracy)."""

from evoarena.benchmarks.sheets.benchmark import SheetsBenchmark, SheetsParams

__all__ = ["SheetsBenchmark", "SheetsParams"]
