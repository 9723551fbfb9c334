"""CLR's role-probe situations: two tiny fixed tasks in CLR's own format (a rule with an opaque label and its example,
a wrong program, and the practice feedback's membership sentences), for `Benchmark.probe_examples`."""

from __future__ import annotations

from evoarena.api import ProbeExample

_PROGRAM = (
    "```python\ndef solve(records):\n    totals = {{}}\n    for r in records:\n"
    "        if r['{field}'] == '{example}':\n            continue\n"
    "        totals[r['{entity}']] = totals.get(r['{entity}'], 0) + 1\n    return totals\n```"
)


def _example(id: str, *, domain: str, entity: str, field: str, label: str, example: str, member: str,
             other: str) -> ProbeExample:
    task = (
        f"{domain}. Each record is one order with the fields: id, {entity}, {field}.\n\n"
        f"Base task: count the orders of each {entity}.\nRules (apply all of them):\n"
        f"- Orders in {label} are not counted. A record is in {label} when its {field} belongs to {label}; "
        f"for example, {example} belongs to {label}.\n\n"
        f"Write a Python program that defines `solve(records)`: it returns a dict mapping each {entity} to the "
        f"number of its records that are counted.\nReply with the program in one ```python code block."
    )
    feedback = (
        f"1 of 3 practice inputs failed: the largest {entity} total was 4, expected 3.\n"
        f"{member} belongs to {label}, like {example}; records with this value are not counted.\n"
        f"{other} does not belong to {label}, unlike {example}; records with this value are counted."
    )
    return ProbeExample(
        id=id, task=task, output=_PROGRAM.format(field=field, example=example, entity=entity), answer="4",
        feedback=feedback, observation=feedback,
        lesson=(f"Exclude every value of the class {label} stands for, not only its example: {member} belongs to "
                f"{label}, like {example}."),
    )


PROBE_EXAMPLES: tuple[ProbeExample, ...] = (
    _example("clr-probe-city", domain="Shop orders", entity="customer", field="city", label="Group Z5",
             example="Lisbon", member="Madrid", other="Oslo"),
    _example("clr-probe-fruit", domain="Market orders", entity="stall", field="fruit", label="Set Q2",
             example="lemon", member="lime", other="banana"),
)
