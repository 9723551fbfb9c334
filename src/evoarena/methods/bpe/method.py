"""The `bpe` method: one practice step is one episode played by the BPE agent with the harness as it stands (its
experience frozen for the episode); then the episode's trace becomes evidence about the bank (pollution), the usage
counts its recalls raised are kept, and — in the `evolving` mode — the bank is consolidated (add / update / remove)
by the `consolidator` role or by rules, at each epoch boundary (every `len(train)` episodes, the paper's schedule) by
default or every `consolidate_every` episodes. Nothing of this runs in val or test: the harness under test is the
one practice left, its bank frozen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from evoarena.api import Method, Params, PracticeContext, TaskView, method
from evoarena.api.episode_agent import EpisodeAgent
from evoarena.api.method_base import harness_toml
from evoarena.harness import HarnessWorkspace, Manifest
from evoarena.harness.state import Given, parse_state
from evoarena.methods.bpe.agent import BPEAgent, Config, usage_from
from evoarena.methods.bpe.consolidate import ConsolidationError, apply_ops, parse_ops, prompt, rule_ops
from evoarena.methods.bpe.evidence import episode_record, pollution, update_evidence
from evoarena.methods.bpe.experience import STORES, Bank, location_prior
from evoarena.methods.prompting import render_prompt
from evoarena.models import GenParams

STATE = "memory/bpe/state.json"


class Check(BaseModel):
    """A search prior checked against an episode: where it put the object, hit or miss, where the episode saw it."""

    id: str
    object: str
    location: str
    result: str
    seen: str | None


class EpisodeSummary(BaseModel):
    """One practice episode as kept: its outcome, the steps by kind, the meta-actions used, the entries recalled,
    the priors checked and the notes made (None where the episode left no trace to read it from)."""

    episode: int
    task_id: str
    task_type: str | None
    won: bool
    score: float
    steps: int
    stopped: str | None
    kinds: dict[str, int] | None
    meta: dict[str, int] | None
    recalled: list[str] | None
    checks: list[Check] | None
    notes: int


class Change(Given):
    """A change consolidation made to the bank (an add also names the entry it evicted, or null)."""

    op: str
    id: str
    store: str
    text: str
    evicted: str | None = None


class RefusedOp(BaseModel):
    op: str
    why: str


class Consolidation(BaseModel):
    """One consolidation: its episode, mode (model | rule), status, counts by operation, changes and refusals."""

    episode: int
    mode: str
    status: str
    counts: dict[str, int]
    changes: list[Change]
    refused: list[RefusedOp]


class State(BaseModel):
    """BPE's state: the episodes, the evidence about each entry, the episodes waiting for consolidation (their full
    evidence records, evidence.episode_record), the last entry number per store, and the consolidations."""

    episodes: list[EpisodeSummary] = []
    evidence: dict[str, dict[str, int]] = {}
    pending: list[dict[str, Any]] = []
    counters: dict[str, int] = {}
    consolidations: list[Consolidation] = []


def read_state(tree: Mapping[str, str]) -> State:
    text = tree.get(STATE)
    return parse_state(STATE, text, State) if text else State()


class Seed(Params):
    """An experience entry written at initialisation; a search prior reads '<object> is in/on <place>'."""

    store: Literal["general", "task", "mistakes", "search"]
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _readable(self) -> Seed:
        if not self.text.strip() or (self.store == "search" and location_prior(self.text) is None):
            raise ValueError(f"{self.store} entry {self.text!r}: a search prior reads '<object> is in/on <place>'")
        return self


@method("bpe")
class BPE(Method):
    """EvoHarness's prompt-time BPE harness (seed 004; no released code): Belief / Progress / Experience state and
    the meta-actions track / commit / recall / note on the shared step budget. docs/methods/bpe.md."""

    roles = ("solver", "consolidator")

    class Params(Method.Params):
        belief: bool = Field(True, description="The Belief block, its help and `track` (off: an ablation).")
        progress: bool = Field(True, description="The Progress block, its help and `commit` (off: an ablation).")
        experience: bool = Field(True, description="The Experience stores, `recall`, `note` and consolidation (off: "
                                                   "an ablation).")
        experience_mode: Literal["evolving", "frozen"] = Field("evolving", description="Whether consolidation "
                                                               "writes the bank between episodes.")
        consolidation: Literal["model", "rule"] = Field("model", description="By the `consolidator` role or by "
                                                        "rules (the model-free control).")
        progress_cap: int = Field(8, ge=1, description="Subgoals kept in Progress.")
        store_cap: int = Field(80, ge=1, description="Entries per experience store (LFU eviction).")
        recall_k: int = Field(3, ge=1, description="Entries a `recall` returns (keyword top-k).")
        consolidate_every: int = Field(0, ge=0, description="Episodes between consolidations (0: each epoch, as the "
                                                            "paper).")
        max_ops: int = Field(8, ge=1, description="Operations one consolidation may apply.")
        consolidate_max_tokens: int = Field(768, ge=1, description="The consolidator's reply cap.")
        consolidate_temperature: float = Field(0.0, description="The consolidator's sampling temperature.")
        initial_experience: list[Seed] = Field(default_factory=list, description="Entries `{store, text}` written "
                                               "at initialisation (source `initial`).")

    params: Params

    @property
    def config(self) -> Config:
        p = self.params
        return Config(p.belief, p.progress, p.experience, p.experience_mode == "evolving", p.progress_cap,
                      p.recall_k)

    @property
    def evolving(self) -> bool:
        return self.params.experience and self.params.experience_mode == "evolving"

    @classmethod
    def state_view(cls, tree: Mapping[str, str]) -> dict[str, Any]:
        if STATE not in tree:
            return {}
        state = read_state(tree)
        bank = Bank.from_tree(tree)
        episodes = state.episodes
        meta: dict[str, int] = {}
        for ep in episodes:
            for k, v in (ep.meta or {}).items():
                meta[k] = meta.get(k, 0) + v
        return {"episodes": len(episodes), "won": [e.won for e in episodes],
                "meta_per_episode": {k: v / len(episodes) for k, v in sorted(meta.items())} if episodes else {},
                "bank": {s: len(bank.stores[s]) for s in STORES},
                "consolidations": len(state.consolidations),
                "pollution": pollution(bank.entries(), state.evidence)}

    def initialize(self, ws: HarnessWorkspace, system_prompt: str, solver_params: GenParams) -> None:
        actions = [f"{a}[...]" for a in self.config.meta_actions]
        ws.write("system.md", render_prompt(__package__, "system", base=system_prompt.strip(), actions=actions).strip()
                 + "\n" if actions else system_prompt)  # BPE off: the benchmark's prompt, as `frozen` writes it
        ws.write("harness.toml", harness_toml(solver_params))
        if self.params.experience:
            bank = Bank(cap=self.params.store_cap)
            for item in self.params.initial_experience:
                bank.add(item.store, item.text, 0, source="initial")
            for file, text in bank.files().items():
                ws.write(file, text)
            ws.save_state(STATE, State(counters=dict(bank.counters)))

    def episode_agent(self, tree: Mapping[str, str], task: TaskView) -> EpisodeAgent | None:
        """None with every component off: then the solver acts alone with the same prompt as `frozen` (ReAct)."""
        config = self.config
        if not config.meta_actions:
            return None
        bank = Bank.from_tree(tree, self.params.store_cap) if config.experience else None
        return BPEAgent(config, bank)

    # -- the practice step ------------------------------------------------------------------------------------------
    def practice(self, ctx: PracticeContext, task: TaskView) -> Manifest | None:
        tree = ctx.harness.tree()
        state = read_state(tree)
        attempt = ctx.solve(task)
        if attempt.error:  # a provider error: the unit is redone or recorded; nothing learnt
            return None
        fb = ctx.feedback(task, attempt)
        episode = len(state.episodes) + 1
        record = episode_record(attempt.answer, won=bool(fb.passed)) or {
            "won": bool(fb.passed), "steps": 0, "kinds": {}, "meta": {}, "notes": [], "recalled": []}
        record.update({"episode": episode, "task_id": task.id, "score": float(fb.score)})
        bank = Bank.from_tree(tree, self.params.store_cap, state.counters) \
            if self.params.experience else None
        consolidation: Consolidation | None = None
        if bank is not None:
            before = bank.files()
            usage = usage_from(attempt.tree_after) if self.evolving else None
            if usage:
                bank.set_usage(usage)  # the counts the episode's recalls raised (written back at its end)
            record["checks"] = update_evidence(state.evidence, bank.entries(), record)
            if self.evolving:
                state.pending.append(record)
                every = self.params.consolidate_every or max(1, len(ctx.train))  # 0: an epoch
                if len(state.pending) >= every:
                    consolidation = self._consolidate(ctx, bank, state, episode)
                    state.pending = []
            state.counters = dict(bank.counters)
            for file, text in bank.files().items():
                if before.get(file) != text:
                    ctx.harness.write(file, text)
        state.episodes.append(EpisodeSummary.model_validate({k: record.get(k) for k in (
            "episode", "task_id", "task_type", "won", "score", "steps", "stopped", "kinds", "meta", "recalled",
            "checks")} | {"notes": len(record.get("notes", []))}))
        ctx.harness.save_state(STATE, state)
        view = pollution(bank.entries(), state.evidence) if bank is not None else None
        ctx.log("bpe_episode", {**state.episodes[-1].model_dump(),
                                "consolidation": consolidation.model_dump() if consolidation else None,
                                "bank": len(bank) if bank is not None else None,
                                "pollution_rate": view["rate"] if view else None})
        changed = "" if consolidation is None else (
            f"; consolidation ({consolidation.mode}): {consolidation.status}, "
            + ", ".join(f"{k} {v}" for k, v in consolidation.counts.items()))
        return Manifest(intent=f"BPE episode {episode} ({record.get('task_type') or task.id}): "
                               f"{'won' if fb.passed else 'not won'} in {record['steps']} steps{changed}",
                        evidence=f"{fb.message}; meta-actions {record.get('meta', {})}")

    def _consolidate(self, ctx: PracticeContext, bank: Bank, state: State, episode: int) -> Consolidation:
        """Add / update / remove from the pending episodes (model or rules); malformed output is rejected."""
        mode, p = self.params.consolidation, self.params
        status, ops = "applied", []
        if mode == "rule":
            ops = rule_ops(bank, state.pending, state.evidence)
        else:
            messages = prompt(bank, state.pending, cap=p.store_cap, max_ops=p.max_ops)
            reply = ctx.chat_many("consolidator", [messages], max_tokens=p.consolidate_max_tokens,
                                  temperature=p.consolidate_temperature,
                                  reject_cut_off="consolidator reply")[0]
            if reply is None:
                status = "no reply"
            else:
                try:
                    ops = parse_ops(reply.text)
                except ConsolidationError as err:
                    ctx.reject("consolidator reply", reply.text, str(err))
                    status = "rejected"
        done, refused = apply_ops(bank, ops, episode, source=mode, max_ops=p.max_ops,
                                  evidence=state.evidence)
        for op, why in refused:
            ctx.reject("consolidator operation" if mode == "model" else "rule operation", op.line(), why, part=True)
        counts = {k: sum(d["op"] == k for d in done) for k in ("add", "update", "remove")}
        counts["evicted"] = sum(bool(d.get("evicted")) for d in done)
        counts["refused"] = len(refused)
        entry = Consolidation.model_validate({"episode": episode, "mode": mode, "status": status, "counts": counts,
                                              "changes": done,
                                              "refused": [{"op": op.line(), "why": why} for op, why in refused]})
        state.consolidations.append(entry)
        ctx.log("bpe_consolidation", entry.model_dump())
        return entry
