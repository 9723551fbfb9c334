"""The sheets benchmark's role-probe situations: two tiny fixed spreadsheet tasks in its own format, a wrong program
and the practice feedback naming wrong cells, for `Benchmark.probe_examples`."""

from __future__ import annotations

from evoarena.api import ProbeExample

_ANSWER = (
    "Write a Python program that defines `solve(input_path, output_path)`. It must open the workbook at `input_path` "
    "(openpyxl is available), make the change, and save the whole workbook to `output_path`. Reply with one "
    "```python code block."
)

SCAN_INSTRUCTION = (
    'In sheet "Readings", go down the rows in order and write "Yes" in "Alert" when the row\'s "Level" is at least 5% '
    'below the reference value; otherwise leave it empty. The reference starts as the first row\'s "Level" (the first '
    'row stays empty); each time a row gets "Yes", its "Level" becomes the new reference. Rows without a "Level" stay '
    "empty."
)

SCAN_TASK = f"""## Spreadsheet task

### Instruction
{SCAN_INSTRUCTION}

### Workbook
Sheet "Readings" (rows 1-5, columns A-C):
```
  | A          | B     | C
1 | Date       | Level | Alert
2 | 2024-06-13 | 100   |
3 | 2024-06-14 | 94    |
4 | 2024-06-15 | 90    |
5 | 2024-06-16 | 85    |
```

### Target range
Readings!C2:C5

### Answer
{_ANSWER}
"""

SCAN_PROGRAM = """```python
import openpyxl


def solve(input_path, output_path):
    wb = openpyxl.load_workbook(input_path)
    ws = wb["Readings"]
    reference = ws["B2"].value
    for row in range(3, ws.max_row + 1):
        value = ws.cell(row, 2).value
        if value is not None and value <= reference * 0.95:
            ws.cell(row, 3).value = "Yes"
    wb.save(output_path)
```"""

SUM_TASK = f"""## Spreadsheet task

### Instruction
In sheet "Sales", write the running total of "Amount" in "Total": each row's "Total" is the sum of "Amount" from \
the first data row down to that row.

### Workbook
Sheet "Sales" (rows 1-4, columns A-C):
```
  | A     | B      | C
1 | Month | Amount | Total
2 | Jan   | 10     |
3 | Feb   | 5      |
4 | Mar   | 7      |
```

### Target range
Sales!C2:C4

### Answer
{_ANSWER}
"""

SUM_PROGRAM = """```python
import openpyxl


def solve(input_path, output_path):
    wb = openpyxl.load_workbook(input_path)
    ws = wb["Sales"]
    for row in range(2, ws.max_row + 1):
        ws.cell(row, 3).value = ws.cell(row, 2).value
    wb.save(output_path)
```"""

PROBE_EXAMPLES: tuple[ProbeExample, ...] = (
    ProbeExample(
        id="sheets-probe-scan", task=SCAN_TASK, output=SCAN_PROGRAM, answer=SCAN_PROGRAM,
        feedback="Cell accuracy 0.67; all cells of all 1 cases right: no.\n"
                 "Case 1: 2 of 3 target cells right; wrong: C5 expected 'Yes', got None.",
        lesson="Sequential scans: the flags go wrong after the first flagged row; the reference value must move to "
               "the value of each flagged row.",
    ),
    ProbeExample(
        id="sheets-probe-total", task=SUM_TASK, output=SUM_PROGRAM, answer=SUM_PROGRAM,
        feedback="Cell accuracy 0.33; all cells of all 1 cases right: no.\n"
                 "Case 1: 1 of 3 target cells right; wrong: C3 expected 15, got 5; C4 expected 22, got 7.",
        lesson="Running totals: carry the previous row's total down the column and add this row's amount.",
    ),
)
