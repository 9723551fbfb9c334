"""Reference program for `date_clean`: parse each typed date (real dates, ISO text, slashes in the stated order,
month names, compact digits) and write it in the asked format or as a real date."""

import datetime
import re

from openpyxl import load_workbook

from evoarena.benchmarks.sheets.solutions._common import PARAMS, blank, find_header  # render: drop

MONTHS = {m: i + 1 for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                          "dec"])}  # fmt: skip
FORMATS = {"YYYY-MM-DD": "%Y-%m-%d", "DD/MM/YYYY": "%d/%m/%Y", "MM/DD/YYYY": "%m/%d/%Y", "DD.MM.YYYY": "%d.%m.%Y",
           "DD-Mon-YYYY": "%d-%b-%Y"}  # fmt: skip


def parse_date(value):
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    text = str(value).strip()
    try:
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", text)
        if m:
            return datetime.date(int(m[1]), int(m[2]), int(m[3]))
        m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{4})", text)
        if m:
            a, b = int(m[1]), int(m[2])
            day, month = (a, b) if PARAMS["order"].startswith("day") else (b, a)
            return datetime.date(int(m[3]), month, day)
        m = re.fullmatch(r"([A-Za-z]+)\.? (\d{1,2}),? (\d{4})", text)
        if m and m[1][:3].lower() in MONTHS:
            return datetime.date(int(m[3]), MONTHS[m[1][:3].lower()], int(m[2]))
        m = re.fullmatch(r"(\d{1,2}) ([A-Za-z]+)\.? (\d{4})", text)
        if m and m[2][:3].lower() in MONTHS:
            return datetime.date(int(m[3]), MONTHS[m[2][:3].lower()], int(m[1]))
        m = re.fullmatch(r"(\d{4})(\d{2})(\d{2})", text)
        if m:
            return datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None
    return None


def solve(input_path, output_path):
    wb = load_workbook(input_path)
    ws = wb[PARAMS["sheet"]]
    top, cols = find_header(ws, {PARAMS["date"], PARAMS["out"]})
    for r in range(top + 1, ws.max_row + 1):
        value = ws.cell(r, cols[PARAMS["date"]]).value
        if blank(value):
            continue
        day = parse_date(value)
        out = ws.cell(r, cols[PARAMS["out"]])
        if day is None:
            out.value = PARAMS["invalid"]
        elif PARAMS["as_date"] == "1":
            out.value = datetime.datetime(day.year, day.month, day.day)
        else:
            out.value = day.strftime(FORMATS[PARAMS["fmt"]])
    wb.save(output_path)
