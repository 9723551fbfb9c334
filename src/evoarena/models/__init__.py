"""Models: one interface, three backends (openai, embedded, scripted), a ledger and a cache."""

from evoarena.models.base import (
    Backend,
    Completion,
    GenParams,
    Message,
    ProviderError,
    TokenLogprob,
    Usage,
    offers_function_calling,
)
from evoarena.models.cache import ResponseCache, cache_key, call_key, default_cache_path, prompt_hash
from evoarena.models.factory import build_backend
from evoarena.models.halt import Halt, RunHalted
from evoarena.models.ledger import CallScope, Meter, ModelCallError, RoleModel, attributed
from evoarena.models.scripted import Policy, PolicyReply, ScriptedBackend, calls_tools
from evoarena.models.tooling import Tool, ToolCall

__all__ = [
    "Backend",
    "CallScope",
    "attributed",
    "Completion",
    "GenParams",
    "Halt",
    "Message",
    "Meter",
    "ModelCallError",
    "Policy",
    "PolicyReply",
    "ProviderError",
    "ResponseCache",
    "RoleModel",
    "RunHalted",
    "ScriptedBackend",
    "TokenLogprob",
    "Tool",
    "ToolCall",
    "Usage",
    "build_backend",
    "calls_tools",
    "offers_function_calling",
    "cache_key",
    "call_key",
    "default_cache_path",
    "prompt_hash",
]
