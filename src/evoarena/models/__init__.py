"""Models: one interface, three backends (openai, embedded, scripted), a ledger and a cache."""

from evoarena.models.base import Backend, Completion, GenParams, Message, ProviderError, TokenLogprob, Usage
from evoarena.models.cache import ResponseCache, cache_key, call_key, default_cache_path, prompt_hash
from evoarena.models.factory import build_backend
from evoarena.models.halt import Halt, RunHalted
from evoarena.models.ledger import CallScope, Meter, ModelCallError, RoleModel, attributed
from evoarena.models.scripted import Policy, ScriptedBackend

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
    "ProviderError",
    "ResponseCache",
    "RoleModel",
    "RunHalted",
    "ScriptedBackend",
    "TokenLogprob",
    "Usage",
    "build_backend",
    "cache_key",
    "call_key",
    "default_cache_path",
    "prompt_hash",
]
