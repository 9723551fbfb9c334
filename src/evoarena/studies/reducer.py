"""The evidence-preserving reducer replayed over built build/test logs with a scripted reducer (SoL-Pi, seed 000
§10): how many receipts are accepted and how many bytes they save — and, what matters, is every unfaithful receipt
rejected for the right reason, and is every log with credential-like text kept from the reducer altogether?

A log is built, not recorded: a pytest session (passing, or failing with assertion tracebacks), a gcc build driven by
make (clean with warnings, or stopping at an error), or an npm/jest run (tests failing, or a build). Its size is
drawn around the 4 KiB threshold (3–4 KiB, 4–6 KiB or 8–20 KiB; the first two just under and at it, exactly 4095
and 4096 bytes, on every seed); one log in five carries a credential-like line (an exported API key, a bearer
header, an AWS key id, a password assignment), and one in twelve comes from a command that is not a build or test.

The scripted reducer stands for the small model. For each log it is told in advance how to behave: faithful (it
quotes the log's failure lines and summary, with the log's hash and exit status), or unfaithful in one of the ways
the checks guard against — a quote not in the log, a wrong exit status, a wrong hash, more than 12 items, a reply
that is not JSON, a reply over 8 KiB, a failing run's receipt with no failure quoted, a key the schema does not
have. It records every log it is given, so the replay can count its calls and check what reached it. No model is
called.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from evoarena.codec import to_plain
from evoarena.runtime import RECEIPT_SCHEMA, EvidenceReducer, Reducer, ReducerRequest
from evoarena.runtime.reducer import FAILURE_SIGNAL, MIN_BYTES
from evoarena.runtime.text import sha256_text, utf8_len

#: Each behaviour and the reason the reducer must give for it ("applied": accepted).
BEHAVIOURS = {"faithful": "applied", "invented-quote": "unverifiable-quote", "wrong-exit-status": "wrong-exit-status",
              "wrong-hash": "bad-hash", "too-many-items": "oversize-receipt", "not-json": "invalid-json",
              "oversized-reply": "oversize-receipt", "hidden-failure": "missing-failure-evidence",
              "extra-key": "schema-mismatch"}
SECRETS = ("export OPENAI_API_KEY=sk-proj-4f9aQ2mZx81LrT0pWbV7cY3n", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9."
           "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N", "aws: using key AKIAIOSFODNN7EXAMPLE for upload",
           "DB_PASSWORD=hunter2-correct-horse")


def _pytest(rng: random.Random, target: int, fail: bool) -> list[str]:
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.11.9, pytest-8.2.0, pluggy-1.5.0", "collected 240 items", ""]
    i = failed = 0
    while sum(len(x) + 1 for x in lines) < target:
        bad = fail and (failed == 0 or rng.random() < 0.05)
        lines.append(f"tests/test_parse{i // 30:02d}.py::test_case_{i:03d} {'FAILED' if bad else 'PASSED'}")
        if bad:
            failed += 1
            lines += [f">       assert parse('{i}') == {i + 1}", f"E       AssertionError: assert {i} == {i + 1}"]
        i += 1
    lines.append(f"{'=' * 20} {f'{failed} failed, ' if failed else ''}{i - failed} passed in 3.21s {'=' * 20}")
    return lines


def _gcc(rng: random.Random, target: int, fail: bool) -> list[str]:
    lines: list[str] = []
    i = 0
    while sum(len(x) + 1 for x in lines) < target:
        lines.append(f"gcc -O2 -Wall -Iinclude -c src/unit_{i:03d}.c -o build/unit_{i:03d}.o")
        if rng.random() < 0.3:
            lines.append(f"src/unit_{i:03d}.c:{rng.randrange(1, 300)}:7: warning: unused variable 'tmp' "
                         "[-Wunused-variable]")
        i += 1
    if fail:
        lines += [f"src/unit_{i:03d}.c:42:5: error: 'cfg' undeclared (first use in this function)",
                  f"make: *** [Makefile:31: build/unit_{i:03d}.o] Error 1"]
    else:
        lines.append(f"gcc -o app build/*.o -lm  # linked {i} objects")
    return lines


def _npm(rng: random.Random, target: int, fail: bool) -> list[str]:
    lines = ["> app@1.4.0 test", "> jest --ci", ""]
    i = failed = 0
    while sum(utf8_len(x) + 1 for x in lines) < target:
        bad = fail and (failed == 0 or rng.random() < 0.05)
        lines.append(f"  {'✕' if bad else '✓'} handles case {i} ({rng.randrange(1, 40)} ms)")
        if bad:
            failed += 1
            lines.append(f"    Error: expect(received).toBe(expected) // case {i}")
        i += 1
    lines.append(f"Tests:       {f'{failed} failed, ' if failed else ''}{i - failed} passed, {i} total")
    return lines


#: (builder, command, exit status when it fails).
KINDS = {"pytest": (_pytest, "pytest -q", 1), "gcc": (_gcc, "make -j2", 2), "npm": (_npm, "npm test", 1)}


@dataclass(frozen=True)
class Case:
    """One log, what produced it, and how the scripted reducer will treat it."""

    kind: str
    command: str
    exit_status: int
    log: str
    credential: bool
    behaviour: str


def _exactly(lines: list[str], size: int) -> str:
    """The lines as text of exactly `size` UTF-8 bytes: the last two (the verdict) kept, lines before them dropped
    from the end as needed, and one comment line of padding before the verdict."""
    tail = "".join(x + "\n" for x in lines[-2:])
    text = ""
    for line in lines[:-2]:
        if utf8_len(text + line + "\n" + tail) > size - 8:
            break
        text += line + "\n"
    return text + "#" * (size - utf8_len(text + tail) - 1) + "\n" + tail


def cases(seed: int = 0, logs: int = 24) -> list[Case]:
    """The seeded logs (see the module's docstring); the first two are 4095 and 4096 bytes."""
    if logs < 2:
        raise ValueError("logs must be >= 2")
    rng = random.Random(seed)
    out: list[Case] = []
    for i in range(logs):
        kind = rng.choice(sorted(KINDS))
        build, command, code = KINDS[kind]
        fail = rng.random() < 0.6
        size = (4095, 4096)[i] if i < 2 else rng.choice((rng.randrange(3072, 4096), rng.randrange(4096, 6144),
                                                         rng.randrange(8192, 20480)))
        lines = build(rng, size, fail)
        credential = rng.random() < 0.2
        if credential:
            lines.insert(rng.randrange(1, len(lines) // 2), rng.choice(SECRETS))
        text = _exactly(lines, size) if i < 2 else "\n".join(lines) + "\n"
        if rng.random() < 1 / 12:
            command = "tail -n 400 ci.log"
        behaviours = [b for b in BEHAVIOURS if fail or b != "hidden-failure"]
        behaviour = "faithful" if rng.random() < 0.4 else rng.choice(behaviours[1:])
        out.append(Case(kind, command, code if fail else 0, text, credential, behaviour))
    return out


def _quotes(log: str, fail: bool) -> list[dict[str, str]]:
    lines = [x for x in log.splitlines() if x and not x.startswith("#")]
    failing = [x for x in lines if FAILURE_SIGNAL.search(x)][:4] if fail else []
    return [{"kind": "failure", "quote": x} for x in failing] + [{"kind": "summary", "quote": lines[-1]}]


class ScriptedReducer:
    """The reducer callable: replies per the behaviour planned for each log (by its hash), and records every log it
    was given."""

    def __init__(self, plan: dict[str, str]) -> None:
        self.plan = plan
        self.received: list[str] = []

    def __call__(self, req: ReducerRequest) -> str:
        self.received.append(req.source_sha256)
        how = self.plan[req.source_sha256]
        fail = req.exit_status != 0
        receipt: dict[str, object] = {
            "schema": RECEIPT_SCHEMA, "source_sha256": req.source_sha256, "exit_status": req.exit_status,
            "status": "failure" if fail else "success", "uncertain": False, "evidence": _quotes(req.log, fail)}
        if how == "invented-quote":
            receipt["evidence"] = [{"kind": "summary", "quote": "all 240 tests passed"}]
        elif how == "wrong-exit-status":
            receipt["exit_status"], receipt["status"] = (0, "success") if fail else (1, "failure")
        elif how == "wrong-hash":
            receipt["source_sha256"] = "0" * 64
        elif how == "too-many-items":
            receipt["evidence"] = [{"kind": "summary", "quote": x} for x in req.log.splitlines()[:13]]
        elif how == "not-json":
            return "Summary: the build mostly worked; see the log for details."
        elif how == "oversized-reply":
            return json.dumps(receipt) + " " * 9000
        elif how == "hidden-failure":
            receipt["evidence"] = [e for e in _quotes(req.log, fail) if e["kind"] == "summary"
                                   and not FAILURE_SIGNAL.search(e["quote"])]
        elif how == "extra-key":
            receipt["diagnosis"] = "the parser is off by one"
        return json.dumps(receipt, ensure_ascii=False)


def expected(c: Case) -> str:
    """The reason the reducer must give for `c`: the first gate it meets, else its behaviour's."""
    if c.command.startswith("tail "):
        return "not-designated"
    if utf8_len(c.log) < MIN_BYTES:
        return "below-min-bytes"
    if c.credential:
        return "likely-credentials"
    return BEHAVIOURS[c.behaviour]


@dataclass(frozen=True)
class Replay:
    """One seed's logs through the reducer. `calls`: the scripted reducer's calls; `accepted`: receipts applied;
    `unfaithful_accepted`, `credential_sent`, `wrong_reason` must be 0 (`wrong_reason`: a log whose reason is not
    the one its gate or behaviour calls for); bytes are UTF-8, `saved_bytes` over the accepted logs only."""

    seed: int
    logs: int
    eligible: int
    credential_logs: int
    calls: int
    accepted: int
    unfaithful: int
    unfaithful_accepted: int
    credential_sent: int
    wrong_reason: int
    raw_bytes: int
    accepted_raw_bytes: int
    receipt_bytes: int
    reasons: dict[str, int]

    @property
    def saved_bytes(self) -> int:
        return self.accepted_raw_bytes - self.receipt_bytes

    def row(self) -> dict[str, object]:
        """Its plain form with what it derives, as `evoarena study --json` prints it."""
        return {**to_plain(self), "saved_bytes": self.saved_bytes}


def replay(seed: int = 0, logs: int = 24, *, make: Callable[[Reducer], EvidenceReducer] = EvidenceReducer
           ) -> Replay:
    """Reduce every log of the seed and check each outcome against its plan. `make` builds the reducer around the
    scripted callable (default: the real one); a test passes a weakened one to check that the checks catch it."""
    cs = cases(seed, logs)
    scripted = ScriptedReducer({})
    reducer = make(scripted)
    reasons: Counter[str] = Counter()
    n = Counter[str]()
    for c in cs:
        scripted.plan[sha256_text(c.log)] = c.behaviour  # looked up only if the log is sent
        out = reducer.reduce(c.log, command=c.command, exit_status=c.exit_status)
        reasons[out.reason] += 1
        unfaithful = c.behaviour != "faithful" and expected(c) == BEHAVIOURS[c.behaviour]
        n["eligible"] += expected(c) in BEHAVIOURS.values()
        n["unfaithful"] += unfaithful
        n["unfaithful_accepted"] += unfaithful and out.reduced
        n["wrong_reason"] += out.reason != expected(c)
        n["raw"] += out.source_bytes
        if out.reduced:
            n["accepted"] += 1
            n["accepted_raw"] += out.source_bytes
            n["receipt"] += utf8_len(out.text)
    sent = set(scripted.received)
    cred = [c for c in cs if c.credential]
    return Replay(seed, len(cs), n["eligible"], len(cred), len(scripted.received), n["accepted"], n["unfaithful"],
                  n["unfaithful_accepted"], sum(sha256_text(c.log) in sent for c in cred),
                  n["wrong_reason"], n["raw"], n["accepted_raw"], n["receipt"], dict(sorted(reasons.items())))


def study(seeds: int = 10, logs: int = 24) -> list[Replay]:
    """Seeds 0 .. seeds - 1."""
    return [replay(seed, logs) for seed in range(seeds)]


def table(rows: list[Replay]) -> str:
    """A plain-text table, one row per seed, the totals and the reasons."""
    head = (f"{'seed':>4} {'logs':>4} {'eligible':>8} {'calls':>5} {'accepted':>8} {'unfaithful':>10} "
            f"{'unf. accepted':>13} {'cred. logs':>10} {'cred. sent':>10} {'wrong reason':>12} {'saved KiB':>9} "
            f"{'receipt/raw':>11}")
    lines = ["Evidence-preserving reducer over built logs, scripted reducer (model-free)", head]
    for r in rows:
        frac = f"{r.receipt_bytes / r.accepted_raw_bytes:.3f}" if r.accepted_raw_bytes else "-"
        lines.append(f"{r.seed:>4} {r.logs:>4} {r.eligible:>8} {r.calls:>5} {r.accepted:>8} {r.unfaithful:>10} "
                     f"{r.unfaithful_accepted:>13} {r.credential_logs:>10} {r.credential_sent:>10} "
                     f"{r.wrong_reason:>12} {r.saved_bytes / 1024:>9.1f} {frac:>11}")
    total: Counter[str] = Counter()
    for r in rows:
        total.update(r.reasons)
    saved, raw = sum(r.saved_bytes for r in rows), sum(r.raw_bytes for r in rows)
    lines.append(f"total: {sum(r.accepted for r in rows)} accepted of {sum(r.calls for r in rows)} calls; "
                 f"{sum(r.unfaithful_accepted for r in rows)} of {sum(r.unfaithful for r in rows)} unfaithful "
                 f"accepted; {sum(r.credential_sent for r in rows)} of {sum(r.credential_logs for r in rows)} "
                 f"credential logs sent; saved {saved / 1024:.1f} KiB of {raw / 1024:.1f} KiB of logs "
                 f"({saved / raw:.1%})")
    lines.append("reasons: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    return "\n".join(lines)


def reading(rows: list[Replay]) -> str:
    """One paragraph on what the numbers say, written from them."""
    if not rows:
        return ""
    total: Counter[str] = Counter()
    for r in rows:
        total.update(r.reasons)
    logs, calls, acc = sum(r.logs for r in rows), sum(r.calls for r in rows), sum(r.accepted for r in rows)
    saved, acc_raw, raw = (sum(r.saved_bytes for r in rows), sum(r.accepted_raw_bytes for r in rows),
                           sum(r.raw_bytes for r in rows))
    return (
        f"Of {logs} logs, {calls} reached the scripted reducer; the rest stayed raw without a call "
        f"({total['below-min-bytes']} under 4 KiB, {total['not-designated']} from a command that is not a build or "
        f"test, {total['likely-credentials']} with credential-like text). {acc} receipts were accepted, together "
        f"{saved / acc_raw if acc_raw else 0:.0%} smaller than their logs "
        f"({saved / 1024:.0f} KiB saved, {saved / raw:.0%} of all log bytes). Unfaithful receipts accepted: "
        f"{sum(r.unfaithful_accepted for r in rows)} of {sum(r.unfaithful for r in rows)}; logs whose outcome was "
        f"not the one planned: {sum(r.wrong_reason for r in rows)}; credential-like logs sent: "
        f"{sum(r.credential_sent for r in rows)} of {sum(r.credential_logs for r in rows)}. The checks catch the "
        "unfaithful shapes built here; a receipt that quotes real lines but leaves out the one that matters still "
        "passes them, as long as a failing run's receipt quotes some failure line."
    )
