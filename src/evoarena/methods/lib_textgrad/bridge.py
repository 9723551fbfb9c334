"""The bridge between textgrad 0.1.8 and a cell: the library imported quietly (no network, no log file, no cache) and
its two engines — the forward engine answering from the cell's graded rollouts, the backward engine calling the
cell's update role."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from evoarena.api import Attempt, PracticeContext
from evoarena.models import Message

_IMPORT = threading.Lock()


class NoReply(RuntimeError):
    """The update role gave no reply (a provider error, recorded in the ledger): the step ends without a change."""


def textgrad() -> ModuleType:
    """The `textgrad` package, imported on first use: LiteLLM told to read its bundled cost map (no network), and
    the JSON log file textgrad opens at import (`TEXTGRAD_LOG_DIR`, default `./logs/`) sent to a temporary
    directory that is removed at once; its logger then writes nowhere."""
    with _IMPORT:
        if "textgrad" not in sys.modules:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            before = os.environ.get("TEXTGRAD_LOG_DIR")
            logdir = tempfile.mkdtemp(prefix="evoarena-textgrad-log-")
            os.environ["TEXTGRAD_LOG_DIR"] = logdir
            try:
                import textgrad as tg  # noqa: F401
            finally:
                if before is None:
                    os.environ.pop("TEXTGRAD_LOG_DIR", None)
                else:
                    os.environ["TEXTGRAD_LOG_DIR"] = before
                _silence()
                shutil.rmtree(logdir, ignore_errors=True)
        _silence()
        return sys.modules["textgrad"]


def _silence() -> None:
    """textgrad's logger without its file handler, not propagating: the ledger is the record of every call."""
    logger = logging.getLogger("textgrad")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    logger.propagate = False
    logger.setLevel(logging.CRITICAL + 1)


def engines(ctx: PracticeContext, role: str, prepared: Mapping[tuple[str, str], Attempt],
            on_reply: Callable[[str], None]) -> tuple[Any, Any]:
    """The forward engine (the `solver` role: the cell's rollouts of the batch, looked up by system prompt and
    query; a query not prepared is one solver call) and the backward engine (`role`, one chat call per request)."""
    tg = textgrad()

    class ForwardEngine(tg.EngineLM):  # type: ignore[name-defined]
        model_string = ctx.model("solver").model_name

        def generate(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
            done = prepared.get((system_prompt or "", prompt))
            if done is not None:
                return done.text
            messages = ([Message("system", system_prompt)] if system_prompt else []) + [Message("user", prompt)]
            return ctx.model("solver").complete(messages).text

        def __call__(self, prompt: str, **kwargs: Any) -> str:
            return self.generate(prompt, **kwargs)

    class BackwardEngine(tg.EngineLM):  # type: ignore[name-defined]
        model_string = ctx.model(role).model_name

        def generate(self, prompt: str, system_prompt: str | None = None, **kwargs: Any) -> str:
            if not isinstance(prompt, str):
                raise TypeError("textgrad sent a multimodal request; only text is bridged")
            conversation = ([Message("system", system_prompt)] if system_prompt else []) + [Message("user", prompt)]
            reply = ctx.chat_many(role, [conversation])[0]
            if reply is None:
                raise NoReply(f"no reply from the {role} role")
            on_reply(reply.text)
            return reply.text

        def __call__(self, prompt: str, **kwargs: Any) -> str:
            return self.generate(prompt, **kwargs)

    return ForwardEngine(), BackwardEngine()
