"""ObservationPack (SoL-Pi, seed 000 §10): keep large tool outputs reachable without resending them.

The seed: outputs > 10 KiB are sent whole the first 2 times; from the 3rd time a stable handle and a ~1 KiB head/tail
summary are sent instead, and the agent recalls exact pages by handle. Why: an agent's context is resent on every
model call, so a large log the agent has already read costs its full size again and again; after two full looks a
short placeholder plus exact recall keeps every byte reachable at a fraction of the traffic.

What "the same output" means here. An output is identified by its `source` (a string the caller chooses; "" by
default) and the SHA-256 of its UTF-8 bytes. `send(text, source=...)` is one context send of that output, and the
count is kept per identity: the same characters from the same source are the same output, however they reached the
context again (a re-read file, a re-run command, or the history resent with the next request). Two ways to use it:

- content-keyed (the default, `source=""`, or the tool's name): identical text counts together, whichever call
  produced it;
- per tool result, as the released extension does (it keys by tool name, tool-call id and content hash, and counts the
  provider requests that carry the result): pass the tool-call id as `source` and call `send` for the message on each
  request.

The handle is `obs_` + the first 24 hex digits of SHA-256(source, NUL, content SHA-256) — the released id scheme —
so the same output gets the same handle in every run and every pack.

Recall is by page of a fixed number of *characters* (code points): page `p` is exactly `text[p*P:(p+1)*P]`, the last
page is the short one, and a multi-byte UTF-8 character can never be split (Python strings index code points). The
default P = 4096 characters is at most 16 KiB of UTF-8, the released recall's hard limit per call. Joined, the pages
are the original text, so their SHA-256 equals the one in the placeholder. (A grapheme cluster — a letter and its
combining mark, an emoji sequence — may straddle two pages; joining restores it.)

Outputs at or under the threshold, error outputs, and evidence receipts of the reducer (already a reduction) pass
through whole, as in the released code. Sizes are UTF-8 bytes. See docs/runtime.md for the faithful parts and the
deliberate differences.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

from evoarena.runtime.reducer import RECEIPT_PREFIX
from evoarena.runtime.text import count_lines, sha256_text, utf8_len

#: Outputs larger than this many UTF-8 bytes are packed (the seed's "> 10 KiB"; the released THRESHOLD_BYTES).
THRESHOLD_BYTES = 10 * 1024
#: Sends that carry the whole output before the handle takes over (the seed's "first 2 times"; FULL_SENDS).
FULL_SENDS = 2
#: The placeholder's excerpt budget in UTF-8 bytes, half head and half tail (the seed's "~1 KiB";
#: PLACEHOLDER_EXCERPT_BYTES).
EXCERPT_BYTES = 1024
#: Characters per recall page (at most 16 KiB of UTF-8: the released recall's limit per call).
PAGE_CHARS = 4096
HANDLE_PREFIX = "obs_"


class RecallError(LookupError):
    """A recall that cannot be answered: an unknown handle, or a page outside 0 .. pages - 1."""


@dataclass(frozen=True)
class Packed:
    """One send: what goes into the context (`text`) and what it stood for.

    `kind`: "passthrough" (not packed: small, an error, or a receipt), "full" (a large output within its full sends)
    or "handle" (the placeholder). `send_number` counts this output's sends, this one included (0 for passthrough)."""

    text: str
    kind: str
    handle: str | None
    send_number: int
    raw_bytes: int
    sent_bytes: int


@dataclass(frozen=True)
class RecallPage:
    """Page `page` of `pages` of a stored output: exactly its characters `start` .. `end`."""

    handle: str
    page: int
    pages: int
    start: int
    end: int
    text: str

    @property
    def last(self) -> bool:
        return self.page == self.pages - 1

    def render(self) -> str:
        """The page as a tool result: a one-line header, then the page's characters verbatim."""
        nxt = "none (last page)" if self.last else str(self.page + 1)
        return (f"[recall {self.handle} page {self.page} of 0..{self.pages - 1}; characters {self.start}..{self.end}; "
                f"next page: {nxt}]\n{self.text}")


@dataclass(frozen=True)
class PackStats:
    """Traffic so far: bytes of every output as produced (`raw_bytes`) vs bytes put into the context
    (`sent_bytes`), sends by kind, and recall traffic (counted apart: it is what the agent chose to read back)."""

    sends: int
    passthrough: int
    full: int
    placeholders: int
    stored: int
    raw_bytes: int
    sent_bytes: int
    recalls: int
    recall_bytes: int

    @property
    def saved_bytes(self) -> int:
        return self.raw_bytes - self.sent_bytes

    @property
    def sent_fraction(self) -> float:
        return self.sent_bytes / self.raw_bytes if self.raw_bytes else 1.0


@dataclass
class _Stored:
    handle: str
    source: str
    text: str
    sha256: str
    bytes: int
    sends: int = 0
    placeholder: str | None = None


def handle_for(text: str, source: str = "") -> str:
    """The stable handle of an output: `obs_` + 24 hex digits of SHA-256(source NUL content-sha256)."""
    key = f"{source}\0{sha256_text(text)}".encode("utf-8", "surrogatepass")
    return HANDLE_PREFIX + hashlib.sha256(key).hexdigest()[:24]


def is_receipt(text: str) -> bool:
    """True when a whole line of `text` is the reducer's receipt marker (receipts are never packed again)."""
    return any(line == RECEIPT_PREFIX for line in text.split("\n"))


def _cut_bytes(chars: str, budget: int, from_end: bool) -> str:
    """The longest run of whole characters from one end of `chars` within `budget` UTF-8 bytes."""
    used, n = 0, 0
    seq = reversed(chars) if from_end else iter(chars)
    for ch in seq:
        size = utf8_len(ch)
        if used + size > budget:
            break
        used += size
        n += 1
    return chars[len(chars) - n:] if from_end else chars[:n]


def excerpt(text: str, budget: int, *, from_end: bool) -> str:
    """Whole lines from one end of `text` within `budget` UTF-8 bytes (the released rule); when not even one line
    fits — a log written as one long line — whole characters instead, so the excerpt is never empty."""
    *body, last = text.split("\n")  # lines end at "\n" only, as in the released code (not at "\r" or U+2028)
    lines = [line + "\n" for line in body] + ([last] if last else [])
    picked: list[str] = []
    used = 0
    for line in reversed(lines) if from_end else lines:
        size = utf8_len(line)
        if used + size > budget:
            break
        picked.append(line)
        used += size
    if not picked:
        return _cut_bytes(text, budget, from_end)
    return "".join(reversed(picked)) if from_end else "".join(picked)


class ObservationPack:
    """The packer for one agent's context (one episode, one session). Not thread-safe: one context, one caller."""

    def __init__(self, *, threshold_bytes: int = THRESHOLD_BYTES, full_sends: int = FULL_SENDS,
                 excerpt_bytes: int = EXCERPT_BYTES, page_chars: int = PAGE_CHARS) -> None:
        if threshold_bytes < 0 or full_sends < 0 or excerpt_bytes < 0:
            raise ValueError("threshold_bytes, full_sends and excerpt_bytes must be >= 0")
        if page_chars < 1:
            raise ValueError(f"page_chars must be >= 1, got {page_chars}")
        self.threshold_bytes = threshold_bytes
        self.full_sends = full_sends
        self.excerpt_bytes = excerpt_bytes
        self.page_chars = page_chars
        self._store: dict[str, _Stored] = {}
        self._n = {"sends": 0, "passthrough": 0, "full": 0, "placeholders": 0, "raw": 0, "sent": 0, "recalls": 0,
                   "recall_bytes": 0}

    def send(self, text: str, *, source: str = "", error: bool = False) -> Packed:
        """Put one output into the context: whole, or (from its `full_sends + 1`-th send) its placeholder."""
        raw = utf8_len(text)
        self._n["sends"] += 1
        self._n["raw"] += raw
        if error or raw <= self.threshold_bytes or is_receipt(text):
            self._n["passthrough"] += 1
            self._n["sent"] += raw
            return Packed(text, "passthrough", None, 0, raw, raw)
        handle = handle_for(text, source)
        stored = self._store.get(handle)
        if stored is None:
            stored = self._store[handle] = _Stored(handle, source, text, sha256_text(text), raw)
        elif stored.text != text:  # a 96-bit handle collision: fail open, whole, rather than recall another output
            self._n["passthrough"] += 1
            self._n["sent"] += raw
            return Packed(text, "passthrough", None, 0, raw, raw)
        stored.sends += 1
        if stored.sends <= self.full_sends:
            self._n["full"] += 1
            self._n["sent"] += raw
            return Packed(text, "full", handle, stored.sends, raw, raw)
        if stored.placeholder is None:  # the same every time: computed once
            stored.placeholder = self.placeholder(handle)
        out = stored.placeholder
        sent = utf8_len(out)
        self._n["placeholders"] += 1
        self._n["sent"] += sent
        return Packed(out, "handle", handle, stored.sends, raw, sent)

    def placeholder(self, handle: str) -> str:
        """What replaces a stored output: its handle, size, hash, how to recall it, and a head/tail excerpt."""
        s = self._get(handle)
        head_budget = self.excerpt_bytes // 2
        tail_budget = self.excerpt_bytes - head_budget
        head = excerpt(s.text, head_budget, from_end=False)
        tail = excerpt(s.text[len(head):], tail_budget, from_end=True)
        pages = self.pages(handle)
        return "\n".join([
            f"[large output replaced after its first {self.full_sends} sends]",
            f"handle: {handle}",
            f"source: {s.source or '-'}",
            f"original_bytes: {s.bytes}  original_chars: {len(s.text)}  original_lines: {count_lines(s.text)}",
            f"sha256: {s.sha256}",
            f"recall: recall({handle!r}, page) for page 0..{pages - 1} ({self.page_chars} characters per page, "
            "exact; the pages joined are the original)",
            f"[first complete lines, up to {head_budget} bytes]",
            head.removesuffix("\n"),
            f"[middle omitted; last complete lines, up to {tail_budget} bytes]",
            tail.removesuffix("\n"),
            "[end of excerpt]",
        ])

    def pages(self, handle: str) -> int:
        """How many recall pages the output behind `handle` has (the last may be short)."""
        return max(1, math.ceil(len(self._get(handle).text) / self.page_chars))

    def recall(self, handle: str, page: int = 0) -> RecallPage:
        """Page `page` of the output behind `handle`: exactly its characters page*P .. (page+1)*P."""
        s = self._get(handle)
        pages = self.pages(handle)
        if not isinstance(page, int) or isinstance(page, bool) or not 0 <= page < pages:
            raise RecallError(f"page {page!r} is out of range: {handle} has {pages} page(s), 0..{pages - 1}")
        start = page * self.page_chars
        end = min(len(s.text), start + self.page_chars)
        out = RecallPage(handle, page, pages, start, end, s.text[start:end])
        self._n["recalls"] += 1
        self._n["recall_bytes"] += utf8_len(out.text)
        return out

    def recall_all(self, handle: str) -> str:
        """Every page of `handle` joined (what an agent that reads it all gets back: the original text)."""
        return "".join(self.recall(handle, p).text for p in range(self.pages(handle)))

    def sha256(self, handle: str) -> str:
        """The SHA-256 of the stored output's UTF-8 bytes (the one its placeholder shows)."""
        return self._get(handle).sha256

    def handles(self) -> tuple[str, ...]:
        """Every stored output's handle, in the order first sent."""
        return tuple(self._store)

    def sends_of(self, handle: str) -> int:
        """How many times the output behind `handle` has been sent."""
        return self._get(handle).sends

    @property
    def stats(self) -> PackStats:
        n = self._n
        return PackStats(n["sends"], n["passthrough"], n["full"], n["placeholders"], len(self._store), n["raw"],
                         n["sent"], n["recalls"], n["recall_bytes"])

    def _get(self, handle: str) -> _Stored:
        try:
            return self._store[handle]
        except KeyError:
            raise RecallError(f"unknown handle {handle!r}: no output stored under it in this pack") from None
