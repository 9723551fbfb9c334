"""Experiment specs (pydantic), loaded from YAML with one-line errors that name the field."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evoarena.wording import first_error, listing, unknown, where

Backend = Literal["openai", "embedded", "scripted"]

# `--model NAME` shorthands for the shipped embedded models, when the spec has no model of that name: NAME -> the
# ModelSpec.model it stands for (resolved by models/shipped.py; "" is the default, Qwen2.5-Coder-1.5B-Instruct).
EMBEDDED_SHORTHANDS: dict[str, str] = {
    "embedded": "",
    "embedded-small": "qwen2.5-coder-0.5b-instruct",
    "gemma": "gemma3-270m",
}
Evidence = Literal["mechanism", "scaled", "replication"]
INT64_MAX = 2**63 - 1  # SQLite's largest integer: seeds, row ids and limits past it cannot be stored or asked for
Seed = Annotated[int, Field(ge=0, le=INT64_MAX)]  # folded by backends that take fewer bits


class SpecError(ValueError):
    """A spec that cannot be used; the message is one line naming the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(_Strict):
    """USD per million tokens; 0 for local models."""

    input_per_mtok: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    output_per_mtok: float = Field(default=0.0, ge=0, allow_inf_nan=False)


class ModelSpec(_Strict):
    """One model a role can be mapped to."""

    backend: Backend
    # openai: model name; embedded: a shipped model's name (models/shipped.py; "" = Qwen2.5-Coder-1.5B-Instruct) or a
    # .gguf path; scripted: the policy
    model: str = ""
    base_url: str | None = None  # openai only
    api_key_env: str | None = None  # name of the env var holding the key (never the key itself)
    timeout_s: float = Field(default=120.0, gt=0, allow_inf_nan=False)  # one try's; a call's tries share a deadline
    max_retries: int = Field(default=4, ge=0, le=100)
    concurrency: int = Field(default=4, ge=1, le=1024)  # per endpoint
    n_ctx: int = Field(default=2048, ge=1)  # embedded only
    price: Price = Price()
    # openai only: the server offers function calling (tools), so methods that use tools may call them natively
    # (`evoarena serve --function-calling` prints such a spec); otherwise they use a plain-text tool protocol
    function_calling: bool = False
    # how tool results are sent: "tool" (the API's `role: tool` message) or "user" (a user message naming the call,
    # for a server whose chat template drops tool messages: llama-cpp-python's chatml-function-calling)
    tool_results: Literal["tool", "user"] = "tool"

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        if self.backend == "openai" and not self.base_url:
            raise ValueError("openai backend needs base_url")
        if self.function_calling and self.backend != "openai":
            raise ValueError(f"function_calling: only an openai model's server can offer it, not {self.backend}")
        if self.tool_results != "tool" and not self.function_calling:
            raise ValueError("tool_results: only for a model with function_calling: true")
        if self.backend == "scripted" and not self.model:
            raise ValueError("scripted backend needs model (the policy name)")
        return self

    def dumped(self) -> dict[str, Any]:
        """Its JSON form without the function-calling fields at their defaults (so a spec hashes, and a model is
        exported, as before they existed)."""
        data = self.model_dump(mode="json")
        for key in ("function_calling", "tool_results"):
            if data[key] == ModelSpec.model_fields[key].default:
                del data[key]
        return data


class Budget(_Strict):
    """Per-cell limits on evolution (practice + selection); the final test is accounted separately."""

    max_attempts: int | None = Field(default=None, ge=0)
    max_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)
    max_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)  # from each model's price table

    def dumped(self) -> dict[str, Any]:
        """Its JSON form without `max_usd` while unset (so a spec hashes, and a cell's limits read, as before it
        existed)."""
        data = self.model_dump(mode="json")
        if data["max_usd"] is None:
            del data["max_usd"]
        return data


class BenchmarkSpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class MethodSpec(_Strict):
    name: str
    label: str | None = None  # condition name in reports; defaults to name
    params: dict[str, Any] = Field(default_factory=dict)
    roles: dict[str, str] = Field(default_factory=dict)  # per-condition role -> model overrides

    @property
    def condition(self) -> str:
        return self.label or self.name


class HarnessLimits(_Strict):
    """Caps on a harness tree, checked from each file's size on disk before it is read (and on every version a method
    proposes): a method cannot stall its cell with a huge file or a tree of millions of entries."""

    max_file_bytes: int = Field(default=4 * 2**20, ge=1, le=2**30)  # one file's UTF-8 bytes
    max_tree_bytes: int = Field(default=32 * 2**20, ge=1, le=2**32)  # all files' bytes together
    max_entries: int = Field(default=10_000, ge=1, le=1_000_000)  # files and directories together


class ProtocolSpec(_Strict):
    epochs: int = Field(default=1, ge=1)
    # evaluate a checkpoint on val every N practice steps (0 = end of each epoch)
    select_every: int = Field(default=0, ge=0)
    # "best": the checkpoint with the best val mean is graded on test; "last": the last version is (methods that
    # deploy their final state, e.g. SkillProx's X*), and no checkpoint is graded on val
    select: Literal["best", "last"] = "best"
    workers: int = Field(default=2, ge=1, le=1024)  # concurrent evaluations (val/test)
    # "stop": a unit with a provider error (after retries) is not kept and the run stops, to be resumed;
    # "record": keep the error rows (excluded from accuracy, counted in n_errors) and go on.
    on_provider_error: Literal["stop", "record"] = "stop"
    # "in-process": a method runs in the cell's thread, trusted code (docs/security.md); "process": in a child
    # process of its own (inside bubblewrap where it works) that never holds the test split, the grader's data or
    # the run database, talking to its cell over a pipe (`evoarena run --certified`).
    isolation: Literal["in-process", "process"] = "in-process"
    # with isolation: process, how the method's process is confined (docs/security.md, the promises per level):
    # "bwrap" (bubblewrap; the run refuses to start where it does not work), or a weaker level asked for explicitly —
    # "namespaces" (own user/pid/mount/network namespaces: cannot see the run process nor the network, but reads and
    # writes this user's files) or "none" (a plain child process with a minimal environment)
    method_confinement: Literal["bwrap", "namespaces", "none"] = "bwrap"
    # with isolation: process, the CPU seconds a cell's method may spend in its own process (model calls and grading
    # run in the cell, not there); past it the process is killed and the cell fails, saying so
    method_cpu_s: int = Field(default=3600, ge=1)
    # independent work in flight at once — cells, episodes, a step's rollouts and asks, val/test grading — and the cap
    # on model calls in flight across the run (each endpoint's own `concurrency` still applies). Results are the same
    # at any value, so it is not part of the spec hash: a run may be resumed at another (`evoarena run --concurrency`)
    concurrency: int = Field(default=1, ge=1, le=1024)
    # caps on each cell's harness, checked whenever its tree is read or a version is saved. A run either stays
    # within them or fails, so they are not part of the spec hash: raise one and run the same command to resume
    harness: HarnessLimits = HarnessLimits()
    # the smallest difference to the baseline worth finding: `evoarena run` warns before it starts when a comparison
    # cannot detect it at 80% power (`evoarena plan`). A question asked of the run, not what is run: not in the hash
    min_effect: float = Field(default=0.10, gt=0, le=1, allow_inf_nan=False)
    # report each condition's score-vs-spend curve (results.json `spend_curves`, a chart in report.html): what the
    # report shows, not what is run, so not in the hash
    spend_curves: bool = False


class ExecutorSpec(_Strict):
    """Where cells run: `local` (threads of this process) or `ray` (Ray tasks on a cluster: `address` is `auto` for
    the cluster this machine is attached to, `local` for Ray's default (a cluster running here, else one started for
    the run), or `host:port` /
    `ray://host:port`). The driver alone writes the run store, so results and resume are the same either way; not part
    of the spec hash."""

    kind: Literal["local", "ray"] = "local"
    address: str = "auto"
    cpus_per_cell: float = Field(default=1.0, gt=0, allow_inf_nan=False)  # the Ray resources a cell's task asks for


class GenSpec(_Strict):
    """The shape of one role's `gen:` entry (default generation params, models.GenParams); only checked, the entry
    itself is kept as written (so it hashes as before)."""

    temperature: float = Field(default=0.0, ge=0, le=2, allow_inf_nan=False)
    max_tokens: int = Field(default=256, ge=1)
    stop: list[str] = Field(default_factory=list)
    seed: Seed | None = None
    logprobs: bool = False
    top_logprobs: int = Field(default=0, ge=0, le=20)


UPDATE_ROLE = "update"
"""A `roles:` entry that is no role: the model of every update role (all a method plays but `solver`) not mapped by
name — `roles: {solver: small, update: large}` is the asymmetric design in one line."""


class ExperimentSpec(_Strict):
    name: str
    benchmark: BenchmarkSpec
    methods: list[MethodSpec]
    models: dict[str, ModelSpec]
    roles: dict[str, str] = Field(default_factory=lambda: {"solver": "default"})
    seeds: list[Seed] = Field(default_factory=lambda: [0])
    budget: Budget = Budget()
    protocol: ProtocolSpec = ProtocolSpec()
    executor: ExecutorSpec = ExecutorSpec()
    evidence: Evidence | None = None  # None: derived (scripted -> mechanism, else scaled)
    gen: dict[str, Any] = Field(default_factory=dict)  # default generation params per role

    @model_validator(mode="after")
    def _check(self) -> ExperimentSpec:
        for role, model in self.roles.items():
            if model not in self.models:
                raise ValueError(f"roles.{role}: {unknown('model', model, sorted(self.models))}")
        for i, m in enumerate(self.methods):
            for role, model in m.roles.items():
                if model not in self.models:
                    raise ValueError(f"methods.{i}.roles.{role}: {unknown('model', model, sorted(self.models))}")
        if not self.methods:
            raise ValueError("methods: at least one method is needed")
        conditions = [m.condition for m in self.methods]
        if len(set(conditions)) != len(conditions):
            twice = next(c for c in conditions if conditions.count(c) > 1)
            raise ValueError(f"methods: two methods share the condition name {twice!r}; give one a label")
        if not self.seeds:
            raise ValueError("seeds: at least one seed is needed")
        if len(set(self.seeds)) != len(self.seeds):
            seed = next(s for s in self.seeds if self.seeds.count(s) > 1)
            raise ValueError(f"seeds: seed {seed} is listed twice ({listing(self.seeds)})")
        for role, gen in self.gen.items():
            try:
                GenSpec.model_validate(gen)
            except ValidationError as err:
                raise ValueError(_format_error(err, GenSpec, ["gen", role])) from None
        return self

    def with_model(self, name: str) -> ExperimentSpec:
        """Map every role, the spec's and each method's own, to one model: a key of `models`; else `scripted` (the
        spec's first scripted model), a shipped embedded model (`embedded` = Qwen2.5-Coder-1.5B-Instruct,
        `embedded-small` = its 0.5B sibling, `gemma` = Gemma 3 270M) or a path to a `.gguf`. An embedded model added
        here gets the largest `n_ctx` of the spec's own embedded models (the context its prompts were sized for), else
        the default."""
        models = dict(self.models)
        if name not in models:
            if name in EMBEDDED_SHORTHANDS or name.lower().endswith(".gguf"):
                sized = [m.n_ctx for m in models.values() if m.backend == "embedded"]
                added = ModelSpec(backend="embedded", model=EMBEDDED_SHORTHANDS.get(name, name))
                models[name] = added.model_copy(update={"n_ctx": max(sized)}) if sized else added
            elif name == "scripted":
                scripted = [k for k, m in models.items() if m.backend == "scripted"]
                if not scripted:
                    raise SpecError("--model scripted: the spec defines no scripted model to use")
                name = scripted[0]
            else:
                known = sorted({*models, *EMBEDDED_SHORTHANDS, "scripted"})
                raise SpecError(f"--model: {unknown('model', name, known, 'or a path to a .gguf')}")
        roles = {role: name for role in self.roles}
        methods = [m.model_copy(update={"roles": {role: name for role in m.roles}}) for m in self.methods]
        return self.model_copy(update={"models": models, "roles": roles, "methods": methods})

    def with_seeds(self, seeds: Sequence[int]) -> ExperimentSpec:
        """The spec with these seeds, checked as the spec's own would be."""
        try:
            return ExperimentSpec.model_validate({**dict(self), "seeds": list(seeds)})
        except ValidationError as err:
            raise SpecError(f"--seeds: {first_error(err)[1].removeprefix('seeds: ')}") from None

    def roles_for(self, method: MethodSpec) -> dict[str, str]:
        """The role -> model map one condition uses: the spec's, with the method's overrides."""
        return {**self.roles, **method.roles}

    def derived_evidence(self) -> Evidence:
        used = {self.models[m].backend for meth in self.methods for m in self.roles_for(meth).values()}
        if "scripted" in used:
            return "mechanism"
        return self.evidence or "scaled"

    def spec_hash(self) -> str:
        data = self.model_dump(mode="json")
        # at their defaults they leave earlier runs' hashes as they were
        for key in ("isolation", "method_confinement", "method_cpu_s"):
            if data["protocol"][key] == ProtocolSpec.model_fields[key].default:
                del data["protocol"][key]
        del data["protocol"]["harness"]  # a guard, not what is run: a cell stopped at a cap resumes with a raised one
        data["models"] = {name: m.dumped() for name, m in self.models.items()}
        data["budget"] = self.budget.dumped()
        del data["protocol"]["concurrency"]  # how fast, not what: the results do not depend on it
        del data["protocol"]["min_effect"]  # what the user hopes to see, not what is run
        del data["protocol"]["spend_curves"]  # what the report shows, not what is run
        del data["executor"]  # where, not what
        blob = json.dumps(data, sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()


def _format_error(err: ValidationError, model: type[BaseModel] | None = None, prefix: Sequence[str] = ()) -> str:
    """The first problem of `err` in one plain line naming its field: `protocol.epochs: must be at least 1 (got 0)`;
    an unknown field with the closest known one (the fields of `model`, ExperimentSpec by default, at that place)."""
    loc, phrase = first_error(err, model or ExperimentSpec)
    if not loc and err.errors()[0]["type"] == "value_error":  # a whole-spec check: its message names the field
        return phrase
    return f"{where([*prefix, *loc]) or 'spec'}: {phrase}"


def parse_spec(data: Any) -> ExperimentSpec:
    if not isinstance(data, dict):
        raise SpecError("spec: expected a mapping at the top level")
    try:
        return ExperimentSpec.model_validate(data)
    except ValidationError as err:
        raise SpecError(_format_error(err)) from None


def safe_name(name: str) -> str:
    """`name` made fit to be one directory name (a run's default directory): path separators, control characters and
    leading dots become `_`, and it is cut to 200 bytes — so it never leaves its parent or hides in it. An ordinary
    name is returned as it is, so a run's default directory stays where earlier runs put it."""
    safe = "".join("_" if c in "/\\" or not c.isprintable() else c for c in name)
    dots = len(safe) - len(safe.lstrip("."))
    safe = "_" * dots + safe[dots:]
    return safe.encode("utf-8", "surrogatepass")[:200].decode("utf-8", "ignore") or "_"


def read_spec_text(p: Path) -> str:
    """The spec file's text; a missing file, a directory, an unreadable or non-UTF-8 file is a one-line SpecError
    naming the path."""
    if p.is_dir():
        raise SpecError(f"spec: {p} is a directory, not a spec file")
    if not p.exists():
        raise SpecError(f"spec: no such file {p}")
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise SpecError(f"spec: {p} is not UTF-8 text (byte {err.object[err.start]:#04x} at offset {err.start})"
                        ) from None
    except OSError as err:
        raise SpecError(f"spec: cannot read {p} ({err.strerror or type(err).__name__})") from None


def load_spec(path: str | Path, overrides: Sequence[str] = ()) -> ExperimentSpec:
    """The spec in the YAML file `path`, with each `KEY=VALUE` of `overrides` set first (see `set_value`)."""
    p = Path(path)
    text = read_spec_text(p)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f"{p}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(p)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        context = getattr(err, "context", None)
        raise SpecError(f"{where}: not valid YAML ({problem}{f', {context}' if context else ''})") from None
    for item in overrides:
        data = set_value(data, item)
    return parse_spec(data)


def set_value(data: Any, item: str) -> Any:
    """`data` with `KEY=VALUE` set: KEY a dotted path (`benchmark.params.seed`, `methods.2.params.beta`: a list's
    element by its index), VALUE read as YAML (`1`, `true`, `[a, b]`, `{k: v}`, text). A missing mapping key is added;
    a path through anything else is a SpecError."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise SpecError(f"--set {item!r}: expected KEY=VALUE, e.g. benchmark.params.seed=1")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        raise SpecError(f"--set {item!r}: the value is not valid YAML") from None
    parts = key.strip().split(".")
    if not isinstance(data, dict):
        raise SpecError("spec: the file's top level is not a mapping")
    node: Any = data
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[: i + 1])
        if isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        elif isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise SpecError(f"--set {key}: {where} is not an index of a list of {len(node)}")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        else:
            raise SpecError(f"--set {key}: {'.'.join(parts[:i])} is a value, not a mapping or list")
    return data
