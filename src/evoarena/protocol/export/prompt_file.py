"""An exported solver prompt: the messages a harness version shows the solver, with a slot for the task's text, and
the generation parameters it was called with; saved as JSON (and a plain-text rendering) and loaded back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoarena.models import GenParams, Message

SLOT = "{task}"
FORMAT = "evoarena.prompt/1"
JSON_NAME = "prompt.json"
TEXT_NAME = "prompt.txt"


class PromptFileError(ValueError):
    """A prompt file that is missing, not JSON, or not of this format."""


@dataclass(frozen=True)
class PromptTemplate:
    """Messages with `slot` where the task's prompt goes (plain text substitution, so braces elsewhere are literal),
    the solver's generation parameters (seed included), the solver model's spec and where it came from."""

    messages: tuple[Message, ...]
    params: GenParams
    slot: str = SLOT
    model: dict[str, Any] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)

    def render(self, task_text: str) -> list[Message]:
        """The messages the solver is sent for a task whose prompt is `task_text`."""
        return [Message(m.role, m.content.replace(self.slot, task_text)) for m in self.messages]

    def file_form(self) -> dict[str, Any]:
        """What prompt.json holds: the format tag, the slot, the messages' roles and contents, the parameters in their
        ledger form, the model's spec and the source."""
        return {
            "format": FORMAT, "slot": self.slot,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "params": self.params.ledger_form(), "model": self.model, "source": self.source,
        }

    @classmethod
    def from_file_form(cls, data: dict[str, Any]) -> PromptTemplate:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise PromptFileError(f"not an evoarena prompt file (expected format {FORMAT!r})")
        try:
            params = dict(data["params"])
            params["stop"] = tuple(params.get("stop", ()))
            return cls(
                messages=tuple(Message(str(m["role"]), str(m["content"])) for m in data["messages"]),
                params=GenParams(**params), slot=str(data["slot"]), model=dict(data.get("model", {})),
                source=dict(data.get("source", {})),
            )
        except (KeyError, TypeError) as err:
            raise PromptFileError(f"prompt file: missing or ill-typed field ({err})") from None

    def to_text(self) -> str:
        """A plain-text rendering: each message under a `=== role ===` line, then the parameters."""
        parts = [f"# solver prompt: put the task's text where {self.slot} stands\n"]
        parts += [f"=== {m.role} ===\n{m.content}\n" for m in self.messages]
        parts.append(f"=== params ===\n{json.dumps(self.params.ledger_form(), sort_keys=True)}\n")
        return "\n".join(parts)


def prompt_files(template: PromptTemplate) -> dict[str, str]:
    """The files an export of `template` writes: prompt.json (loadable) and prompt.txt (to read)."""
    return {JSON_NAME: json.dumps(template.file_form(), indent=2, ensure_ascii=False, sort_keys=True) + "\n",
            TEXT_NAME: template.to_text()}


def load_prompt(path: Path | str) -> PromptTemplate:
    """A prompt exported by `evoarena export --as prompt`: its prompt.json, or the directory holding it."""
    path = Path(path)
    if path.is_dir():
        path = path / JSON_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PromptFileError(f"{path}: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise PromptFileError(f"{path}: not JSON ({err})") from None
    return PromptTemplate.from_file_form(data)
