"""Top logprobs (`GenParams.top_logprobs`, `TokenLogprob.top`): additive — a call without them keys, caches and is
ledgered exactly as before; with them the alternatives survive the cache and the ledger, and a scripted policy can
report them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from evoarena.models import (
    CallScope,
    Completion,
    GenParams,
    Message,
    PolicyReply,
    ResponseCache,
    RoleModel,
    ScriptedBackend,
    TokenLogprob,
    Usage,
    cache_key,
)
from evoarena.spec import ModelSpec
from evoarena.store import RunStore, conversation

TOP = (TokenLogprob("2", -0.1, (("2", -0.1), ("1", -2.5), ("3", -4.0))),)


def test_params_without_top_logprobs_key_as_before() -> None:
    plain = GenParams(logprobs=True)
    assert "top_logprobs" not in plain.ledger_form()
    assert sorted(plain.ledger_form()) == ["logprobs", "max_tokens", "seed", "stop", "temperature"]
    msgs = [Message("user", "x")]
    # the key of a call without alternatives is the one it always had (the dict it hashes is unchanged)
    assert cache_key("m", plain, msgs, 0) == cache_key("m", GenParams(logprobs=True, top_logprobs=0), msgs, 0)
    assert cache_key("m", plain, msgs, 0) != cache_key("m", GenParams(logprobs=True, top_logprobs=3), msgs, 0)
    asked = GenParams(logprobs=True, top_logprobs=3)
    assert asked.ledger_form()["top_logprobs"] == 3
    assert GenParams.from_ledger_form(json.loads(json.dumps(asked.ledger_form()))) == asked
    with pytest.raises(ValueError, match="needs logprobs"):
        GenParams(top_logprobs=2)
    with pytest.raises(ValueError, match="top_logprobs"):
        GenParams(logprobs=True, top_logprobs=21)


def test_a_token_logprob_serialises_its_alternatives_only_when_it_has_some() -> None:
    assert TokenLogprob("a", -1.0).ledger_form() == {"token": "a", "logprob": -1.0}
    assert TOP[0].ledger_form() == {"token": "2", "logprob": -0.1, "top": [["2", -0.1], ["1", -2.5], ["3", -4.0]]}
    done = Completion("2", Usage(1, 1), logprobs=TOP, finish_reason="stop")
    assert Completion.from_ledger_form(json.loads(json.dumps(done.ledger_form()))) == done
    plain = Completion("a", Usage(1, 1), logprobs=(TokenLogprob("a", -1.0),))
    assert plain.ledger_form()["logprobs"] == [{"token": "a", "logprob": -1.0}]


def _ranker(messages: Sequence[Message], params: GenParams) -> PolicyReply:
    return PolicyReply("2", logprobs=TOP)


def test_a_scripted_policys_logprobs_reach_the_cache_and_the_ledger(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    model = RoleModel(role="solver", model_name="s", backend=ScriptedBackend("ranker", _ranker),
                      spec=ModelSpec(backend="scripted", model="ranker"), store=store,
                      cache=ResponseCache(tmp_path / "cache.sqlite")).scoped(CallScope(cell="c", phase="practice",
                                                                                      unit="u"))
    asked = GenParams(logprobs=True, top_logprobs=3)
    first = model.complete([Message("user", "pick")], asked)
    assert first.logprobs == TOP
    assert model.complete([Message("user", "pick")], asked) == first  # the cache keeps the alternatives
    assert model.complete([Message("user", "pick")]).logprobs is None  # not asked: not given
    rows = store.query("SELECT id, cached, params FROM calls ORDER BY id")
    assert [r["cached"] for r in rows] == [0, 1, 0]
    assert json.loads(rows[0]["params"])["top_logprobs"] == 3 and "top_logprobs" not in json.loads(rows[2]["params"])
    answered = conversation(store, rows[0]["id"])
    assert answered is not None and answered.response is not None
    assert answered.response.logprobs == [TOP[0].ledger_form()]
