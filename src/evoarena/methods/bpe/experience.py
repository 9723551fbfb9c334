"""BPE's Experience E: four stores as harness files (`experience/<store>.jsonl`) — general strategies, task-specific
skills, common mistakes and object-location search priors — each capped (80 in the paper) with LFU eviction by usage
count, read by `recall[query]` through keyword overlap (top 3 per store), which increments the usage of what it
returns. The bank never changes during an episode except for those counts; entries are added, updated and removed
between episodes by consolidation (consolidate.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from evoarena.harness.state import parse_records, record_line

STORES = ("general", "task", "mistakes", "search")
PREFIX = {"general": "g", "task": "t", "mistakes": "m", "search": "s"}
TITLES = {"general": "general", "task": "task-specific", "mistakes": "common mistakes", "search": "search priors"}
DIR = "experience/"
ID = re.compile(r"^[gtms]\d+$")
STOPWORDS = frozenset((
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "from", "with", "and", "or", "but", "is", "are", "was",
    "were", "be", "been", "it", "its", "this", "that", "these", "those", "you", "your", "i", "my", "we", "our",
    "they", "them", "he", "she", "his", "her", "there", "here", "then", "than", "so", "as", "by", "into", "onto",
    "up", "down", "out", "not", "no", "do", "does", "did", "done", "can", "could", "will", "would", "should", "may",
    "might", "must", "have", "has", "had", "some", "any", "all", "each", "one", "put",
))
_WORD = re.compile(r"[a-z0-9]+")
_PRIOR = re.compile(r"^\s*(?:the |a |an |some )?(?P<obj>[a-z][a-z0-9 '-]*?)\s+(?:is|are|was|were)\s+"
                    r"(?:(?:usually|often|typically|likely|mostly|probably|found|kept|stored|always|sometimes)\s+)*"
                    r"(?:in/on|inside|in|on|at)\s+(?:the |a |an )?(?P<loc>[a-z][a-z0-9 '-]*?)\s*(?:[.,;:(]|$)", re.I)


def path(store: str) -> str:
    return f"{DIR}{store}.jsonl"


def tokens(text: str) -> set[str]:
    """Keywords: lower-case alphanumeric words without stopwords, plural -s/-es dropped ("mugs" -> "mug")."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS:
            continue
        if len(w) > 3 and w.endswith("es") and w[:-2].endswith(("s", "x", "ch", "sh")):
            w = w[:-2]
        elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return out


def location_prior(text: str) -> tuple[str, str] | None:
    """(object, receptacle) of a search prior worded "<object> is (usually) in/on <receptacle>", else None."""
    m = _PRIOR.match(text.strip())
    if m is None:
        return None
    obj, loc = " ".join(m.group("obj").lower().split()), " ".join(m.group("loc").lower().split())
    return (obj, loc) if obj and loc and obj != loc else None


class Entry(BaseModel):
    """One experience entry: its id (store letter + number), text, usage count (recalls), the episode that created
    and last updated it, who wrote it (`model`, `rule`, `initial`), and for a search prior the object and place."""

    id: str
    store: str
    text: str
    usage: int = 0
    created: int = 0
    updated: int = 0
    source: str = "model"
    object: str | None = None
    location: str | None = None

    def keywords(self) -> set[str]:
        return tokens(" ".join(x for x in (self.text, self.object, self.location) if x))


@dataclass
class Bank:
    """The four stores; `cap` entries per store; `counters` the last number used per store (ids are never reused,
    so the evidence kept about an entry never passes to another)."""

    stores: dict[str, list[Entry]] = field(default_factory=lambda: {s: [] for s in STORES})
    cap: int = 80
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STORES, 0))

    @classmethod
    def from_tree(cls, tree: Mapping[str, str], cap: int = 80, counters: Mapping[str, int] | None = None) -> Bank:
        stores = {s: parse_records(path(s), tree.get(path(s), ""), Entry) for s in STORES}
        bank = cls(stores, cap, dict.fromkeys(STORES, 0))
        for s in STORES:
            numbers = [int(e.id[1:]) for e in stores[s] if ID.match(e.id)]
            bank.counters[s] = max([*numbers, int((counters or {}).get(s, 0))], default=0)
        return bank

    def files(self) -> dict[str, str]:
        return {path(s): "".join(record_line(e) for e in self.stores[s]) for s in STORES}

    def entries(self) -> list[Entry]:
        return [e for s in STORES for e in self.stores[s]]

    def get(self, entry_id: str) -> Entry | None:
        return next((e for e in self.entries() if e.id == entry_id), None)

    def __len__(self) -> int:
        return sum(len(v) for v in self.stores.values())

    # -- reading ---------------------------------------------------------------------------------------------------
    def retrieve(self, query: str, k: int = 3) -> dict[str, list[Entry]]:
        """Per store, the `k` entries sharing the most keywords with `query` (at least one): more shared keywords
        first, then the more used, then the older. No side effect."""
        q = tokens(query)
        out: dict[str, list[Entry]] = {}
        for s in STORES:
            scored = [(len(q & e.keywords()), e) for e in self.stores[s]]
            hits = sorted((p for p in scored if p[0] > 0), key=lambda p: (-p[0], -p[1].usage, p[1].created,
                                                                         _number(p[1].id)))
            if hits[:k]:
                out[s] = [e for _, e in hits[:k]]
        return out

    def recall(self, query: str, k: int = 3) -> dict[str, list[Entry]]:
        """`retrieve`, and each returned entry's usage count goes up by one (what LFU evicts by)."""
        found = self.retrieve(query, k)
        for hits in found.values():
            for e in hits:
                e.usage += 1
        return found

    # -- writing (between episodes only) ----------------------------------------------------------------------------
    def add(self, store: str, text: str, episode: int, *, source: str = "model") -> tuple[Entry, Entry | None]:
        """A new entry; when the store is full the least-used entry goes first (LFU; the oldest among equals).
        Returns (the new entry, the evicted one or None)."""
        if store not in STORES:
            raise ValueError(f"unknown experience store {store!r} (stores: {', '.join(STORES)})")
        evicted = None
        entries = self.stores[store]
        if len(entries) >= self.cap:
            evicted = min(entries, key=lambda e: (e.usage, e.created, _number(e.id)))
            entries.remove(evicted)
        self.counters[store] += 1
        entry = Entry(id=f"{PREFIX[store]}{self.counters[store]}", store=store, text=text.strip(), usage=0,
                      created=episode, updated=episode, source=source)
        if store == "search" and (prior := location_prior(text)) is not None:
            entry.object, entry.location = prior
        entries.append(entry)
        return entry, evicted

    def update(self, entry_id: str, text: str, episode: int) -> Entry:
        entry = self.get(entry_id)
        if entry is None:
            raise KeyError(entry_id)
        entry.text, entry.updated = text.strip(), episode
        if entry.store == "search":
            entry.object, entry.location = location_prior(text) or (None, None)
        return entry

    def remove(self, entry_id: str) -> Entry:
        entry = self.get(entry_id)
        if entry is None:
            raise KeyError(entry_id)
        self.stores[entry.store].remove(entry)
        return entry

    def set_usage(self, counts: Mapping[str, int]) -> None:
        for e in self.entries():
            if e.id in counts:
                e.usage = int(counts[e.id])

    def find_text(self, store: str, text: str) -> Entry | None:
        norm = " ".join(text.lower().split())
        return next((e for e in self.stores[store] if " ".join(e.text.lower().split()) == norm), None)


def usage_of(tree: Mapping[str, str]) -> dict[str, int]:
    """Every entry's usage count in a harness tree."""
    return {e.id: e.usage for e in Bank.from_tree(tree).entries()}


def render(found: Mapping[str, Iterable[Entry]]) -> list[str]:
    """Recalled entries as the agent is shown them: `[id] (store) text`."""
    return [f"[{e.id}] ({TITLES[s]}) {e.text}" for s in STORES for e in found.get(s, [])]


def _number(entry_id: str) -> int:
    return int(entry_id[1:]) if ID.match(entry_id) else 0
