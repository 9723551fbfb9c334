"""`evoarena serve [MODEL]`: llama.cpp's OpenAI-compatible server on 127.0.0.1 for an embedded model, so the same
weights serve evoarena's `openai` backend and other tools (DSPy, GEPA) side by side. Runs in the foreground until
Ctrl-C, then stops the server and exits cleanly. With `--function-calling` the server offers OpenAI function calling
(llama-cpp-python's `chatml-function-calling` chat format), and the spec snippet says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Annotated

import typer

from evoarena.cli.common import err, fail, out

DEFAULT_PORT = 8080
READY_TIMEOUT_S = 180.0


def resolve_model(model: str) -> tuple[Path, str, bool]:
    """(GGUF path, served model name, whether it is chat-templated) of `model`: a `--model` shorthand (`embedded`,
    `embedded-small`, `gemma`), a shipped name or alias ("" = the default) or a path to a `.gguf`."""
    from evoarena.models import shipped
    from evoarena.models.embedded import gguf_chat_template
    from evoarena.spec import EMBEDDED_SHORTHANDS

    row = shipped.resolve(EMBEDDED_SHORTHANDS.get(model, model))
    if row is not None:
        return shipped.assemble(row), row.name, row.instruct
    path = Path(model).expanduser()
    if not path.is_file():
        raise RuntimeError(f"serve: {model!r} is neither a shipped model ({', '.join(shipped.names())}) nor a file")
    try:
        templated = gguf_chat_template(path) is not None
    except (ValueError, OSError) as e:
        raise RuntimeError(f"serve: cannot read {path} as GGUF: {e}") from None
    return path, path.stem, templated


FUNCTION_CALLING_FORMAT = "chatml-function-calling"


def server_command(path: Path, name: str, port: int, n_ctx: int, templated: bool,
                   function_calling: bool = False) -> list[str]:
    """`python -m llama_cpp.server` on 127.0.0.1 for one model, under `name`; an instruct GGUF's own chat template
    is the chat format (`chat_template.default`, as llama-cpp-python names the template it reads from the file), or
    with `function_calling` llama-cpp-python's `chatml-function-calling` (ChatML, which the shipped Qwen models
    speak: tools offered in the system message, a grammar that makes a called function's arguments JSON of its
    schema)."""
    from evoarena.models.embedded import n_threads

    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(path), "--model_alias", name,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads()), "--n_threads_batch", str(os.cpu_count() or 1),
        "--verbose", "false",  # llama.cpp's load log; uvicorn still logs each request
    ]  # fmt: skip
    if function_calling:
        cmd += ["--chat_format", FUNCTION_CALLING_FORMAT]
    elif templated:
        cmd += ["--chat_format", "chat_template.default"]
    return cmd


def spec_snippet(base_url: str, name: str, function_calling: bool = False) -> str:
    """What to paste: a `models:` entry for a spec, and the LiteLLM-style names DSPy and GEPA take. A server with
    function calling gets `function_calling: true` and `tool_results: user` (its chat template drops `role: tool`
    messages, so tool results go as user messages)."""
    tools = ", function_calling: true, tool_results: user" if function_calling else ""
    return (
        "models:\n"
        f'  served: {{backend: openai, base_url: "{base_url}", model: "{name}", concurrency: 1, timeout_s: 600'
        f"{tools}}}\n"
        f'DSPy:  dspy.LM("openai/{name}", api_base="{base_url}", api_key="EMPTY")\n'
        f'GEPA:  task_lm / reflection_lm = "openai/{name}" with OPENAI_API_BASE={base_url} OPENAI_API_KEY=EMPTY'
    )


def _served_name(base_url: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as resp:
            return str(json.load(resp)["data"][0]["id"])
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError, KeyError, IndexError):
        return None


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


def serve(
    model: Annotated[str, typer.Argument(help="embedded (default), embedded-small, gemma, a shipped name, or a "
                                              ".gguf path.")] = "embedded",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port on 127.0.0.1.")] = DEFAULT_PORT,
    n_ctx: Annotated[int, typer.Option("--n-ctx", min=1, help="Context window (tokens).")] = 8192,
    function_calling: Annotated[bool, typer.Option(
        "--function-calling", help="Offer OpenAI function calling (llama-cpp-python's chatml-function-calling chat "
                                   "format, for ChatML models such as the shipped Qwen ones).")] = False,
) -> None:
    """Serve an embedded model with llama.cpp's OpenAI-compatible server on 127.0.0.1 (foreground; Ctrl-C stops)."""
    try:
        import llama_cpp  # noqa: F401  (the extra; the server subprocess needs it too)

        path, name, templated = resolve_model(model)
    except ImportError as e:
        fail(f"serve needs llama-cpp-python[server] ({e}); install it with: pip install 'evoarena[embedded]'")
        return
    except RuntimeError as e:
        fail(str(e))
        return
    base_url = f"http://127.0.0.1:{port}/v1"
    cmd = server_command(path, name, port, n_ctx, templated, function_calling)
    fmt = "its GGUF chat template" if templated else "no chat template (a base model: prefer /v1/completions)"
    if function_calling:
        fmt = f"the {FUNCTION_CALLING_FORMAT} chat format (function calling)"
    err.print(f"starting llama_cpp.server for {name} ({path}), {fmt} …")
    proc = subprocess.Popen(cmd)
    # Ctrl-C (also `kill -INT` of a background job, whose SIGINT a shell ignores) and `kill PID` stop it cleanly.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    interrupted = False
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while _served_name(base_url) is None:
            if proc.poll() is not None:
                fail(f"llama_cpp.server exited with {proc.returncode} before answering (see its output above)")
            if time.monotonic() > deadline:
                fail(f"llama_cpp.server did not answer {base_url}/models in {READY_TIMEOUT_S:.0f} s")
            time.sleep(0.3)
        out.print(f"serving {name} at {base_url}", soft_wrap=True, highlight=False)
        out.print(spec_snippet(base_url, name, function_calling), soft_wrap=True, highlight=False, markup=False)
        out.print("Ctrl-C stops it.", highlight=False)
        sys.stdout.flush()
        proc.wait()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        _stop(proc)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not interrupted:
        fail(f"llama_cpp.server exited with {proc.returncode}")
    err.print("stopped.")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
