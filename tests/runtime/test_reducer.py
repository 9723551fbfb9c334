"""The evidence-preserving reducer: a receipt replaces a designated ≥ 4 KiB log only when its schema, source hash,
exit status, verbatim quotes and size all check out; otherwise, or when the log looks like it holds credentials
(then it is never sent), the raw log is what the agent sees."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from evoarena.runtime import MIN_BYTES, RECEIPT_PREFIX, RECEIPT_SCHEMA, EvidenceReducer, ReducerRequest
from evoarena.runtime.reducer import is_designated, looks_like_credentials

FAIL_LINE = "FAILED tests/test_parser.py::test_nested - AssertionError: assert 3 == 4"
LOG = "".join(f"tests/test_mod_{i:03d}.py::test_case PASSED\n" for i in range(150)) + (
    "=================================== FAILURES ===================================\n"
    f"{FAIL_LINE}\n"
    "========================= 1 failed, 150 passed in 2.31s =========================\n")


class FakeModel:
    """A scripted reducer: records what it was sent, answers with `reply(request)`."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.requests: list[ReducerRequest] = []

    def __call__(self, req: ReducerRequest) -> str:
        self.requests.append(req)
        return self.reply(req) if callable(self.reply) else self.reply


def receipt(req: ReducerRequest, **over: Any) -> str:
    body: dict[str, Any] = {"schema": RECEIPT_SCHEMA, "source_sha256": req.source_sha256,
                            "exit_status": req.exit_status, "status": "failure" if req.exit_status else "success",
                            "uncertain": False,
                            "evidence": [{"kind": "failure", "quote": FAIL_LINE},
                                         {"kind": "summary", "quote": "1 failed, 150 passed in 2.31s"}]}
    body.update(over)
    return json.dumps(body)


def reduce(model: FakeModel, log: str = LOG, exit_status: int = 1, command: str = "pytest -q") -> Any:
    return EvidenceReducer(model).reduce(log, command=command, exit_status=exit_status)


def test_a_good_receipt_replaces_the_log() -> None:
    assert len(LOG.encode()) >= MIN_BYTES
    model = FakeModel(receipt)
    out = reduce(model)
    assert out.reduced and out.reason == "applied" and out.called
    assert out.text.splitlines()[0] == RECEIPT_PREFIX
    assert json.dumps(FAIL_LINE) in out.text and "exit_status: 1" in out.text
    assert out.source_sha256 == hashlib.sha256(LOG.encode()).hexdigest() and out.source_sha256 in out.text
    assert [(e.kind, e.line) for e in out.evidence] == [("failure", 152), ("summary", 153)]
    assert LOG.splitlines()[151] == FAIL_LINE
    assert len(out.text.encode()) < len(LOG.encode()) // 4
    req = model.requests[0]
    assert (req.log, req.exit_status, req.command) == (LOG, 1, "pytest -q") and req.source_sha256 in req.prompt()


@pytest.mark.parametrize(("reply", "reason"), [
    (lambda r: receipt(r, source_sha256="0" * 64), "bad-hash"),
    (lambda r: receipt(r, evidence=[{"kind": "failure", "quote": "FAILED tests/test_parser.py::test_other"}]),
     "unverifiable-quote"),
    (lambda r: receipt(r, evidence=[{"kind": "failure", "quote": FAIL_LINE.replace("3 == 4", "3 == 5")}]),
     "unverifiable-quote"),
    (lambda r: receipt(r, exit_status=0), "wrong-exit-status"),
    (lambda r: receipt(r, exit_status=2), "wrong-exit-status"),
    (lambda r: receipt(r, status="success"), "wrong-exit-status"),
    (lambda r: receipt(r, evidence=[{"kind": "summary", "quote": "PASSED"}] * 13), "oversize-receipt"),
    (lambda r: receipt(r, uncertain=False, notes="x" * 9000), "oversize-receipt"),
    (lambda r: receipt(r, notes="extra key"), "schema-mismatch"),
    (lambda r: receipt(r, schema="other/1"), "schema-mismatch"),
    (lambda r: receipt(r, evidence=[{"kind": "guess", "quote": FAIL_LINE}]), "schema-mismatch"),
    (lambda r: receipt(r, evidence=[{"kind": "summary", "quote": "1 failed, 150 passed"}]),
     "missing-failure-evidence"),
    (lambda r: "Tests mostly pass; one failure in the parser.", "invalid-json"),
])
def test_a_receipt_that_does_not_check_out_falls_back_to_the_raw_log(reply: Any, reason: str) -> None:
    model = FakeModel(reply)
    out = reduce(model)
    assert (out.reduced, out.reason, out.text, out.called) == (False, reason, LOG, True), out.detail
    assert len(model.requests) == 1


def test_a_receipt_no_smaller_than_the_log_is_refused() -> None:
    segments = [f"{i:02d}" + "x" * 598 for i in range(7)]  # 7 distinct 600-character lines: 4207 bytes in all
    log = "\n".join(segments) + "\nerror: boom\n"
    quotes = [{"kind": "failure", "quote": "error: boom"}] + [{"kind": "summary", "quote": q} for q in segments]
    model = FakeModel(lambda r: receipt(r, evidence=quotes))
    out = EvidenceReducer(model).reduce(log, command="make", exit_status=2)
    assert (out.reduced, out.reason) == (False, "oversize-receipt") and "not smaller" in out.detail


@pytest.mark.parametrize("secret", [
    "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz123456",
    "Authorization: Bearer abc.def.ghi",
    "db password: hunter2",
    "export DB_PASSWORD='p4ss'",
    "mysql -u root --password s3cret",
    "-----BEGIN RSA PRIVATE KEY-----",
    "token ghp_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "aws AKIAABCDEFGHIJKLMNOP",
])
def test_a_credential_like_log_is_never_sent_to_the_reducer(secret: str) -> None:
    model = FakeModel(receipt)
    out = reduce(model, LOG + secret + "\n")
    assert (out.reduced, out.reason, out.called, out.text) == (False, "likely-credentials", False, LOG + secret + "\n")
    assert model.requests == []


@pytest.mark.parametrize("benign", [
    "tests/test_auth.py::test_password_reset PASSED",
    "tests/test_api_key.py::test_rotation PASSED",
    "assert password == expected",
    "FAILED tests/test_login.py::test_password - AssertionError",
])
def test_ordinary_test_names_do_not_read_as_credentials(benign: str) -> None:
    assert not looks_like_credentials(benign)
    assert looks_like_credentials(benign + "\napi_key = abc123")


def test_small_undesignated_or_huge_logs_are_kept_without_a_call() -> None:
    model = FakeModel(receipt)
    small = "error: x\n" * 10
    assert reduce(model, small).reason == "below-min-bytes"
    assert reduce(model, command="cat build.log").reason == "not-designated"
    r = EvidenceReducer(model, max_chars=1000).reduce(LOG, command="pytest", exit_status=1)
    assert r.reason == "over-max-chars"
    assert model.requests == []
    designated = EvidenceReducer(model).reduce(LOG, command="./run-checks", exit_status=1, designated=True)
    assert designated.reduced and len(model.requests) == 1


def test_the_4_kib_threshold_is_inclusive_and_in_bytes() -> None:
    at = "error: boom\n" + "é" * ((MIN_BYTES - 12) // 2)  # 12 + 4084 = 4096 bytes, 2054 characters
    assert len(at.encode()) == MIN_BYTES
    quote = [{"kind": "failure", "quote": "error: boom"}]
    model = FakeModel(lambda r: receipt(r, evidence=quote))
    assert EvidenceReducer(model).reduce(at, command="make", exit_status=2).reason == "applied"
    assert EvidenceReducer(model).reduce(at[:-1], command="make", exit_status=2).reason == "below-min-bytes"


def test_a_reducer_that_raises_or_returns_no_text_keeps_the_raw_log() -> None:
    def broken(req: ReducerRequest) -> str:
        raise TimeoutError("model timed out")

    out = reduce(FakeModel(broken))
    assert (out.reduced, out.reason, out.text) == (False, "reducer-error", LOG) and "timed out" in out.detail
    assert reduce(FakeModel(lambda r: None)).reason == "schema-mismatch"


def test_a_passing_run_and_the_raw_log_read_back() -> None:
    log = LOG.replace(FAIL_LINE, "all good").replace("1 failed, 150 passed", "151 passed")
    model = FakeModel(lambda r: receipt(r, evidence=[{"kind": "summary", "quote": "151 passed in 2.31s"}]))
    red = EvidenceReducer(model)
    out = red.reduce(log, command="python -m pytest", exit_status=0)
    assert out.reduced and "status: success" in out.text
    assert red.raw(out.source_sha256) == log


def test_build_and_test_commands_are_designated() -> None:
    for cmd in ["pytest -q", "python -m pytest tests", "cd repo && make test", "cargo test", "go test ./...",
                "npm test", "python3 -m unittest discover"]:
        assert is_designated(cmd), cmd
    for cmd in ["cat log.txt", "ls -la", "git diff"]:  # loose like the released pattern: `grep pytest` would count
        assert not is_designated(cmd), cmd
