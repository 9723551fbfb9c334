"""Byte, hash and token arithmetic shared by the runtime transforms.

Every size the SoL-Pi mechanisms compare against a threshold (10 KiB, 4 KiB, 1 KiB) is a size in UTF-8 bytes, as in
the released extension (Node's `Buffer.byteLength(text, "utf8")`). Text is encoded with `surrogatepass`, so a tool
output decoded with `errors="surrogateescape"` (lone surrogates) is measured and hashed instead of raising: a
transform must never cost the agent its observation.
"""

from __future__ import annotations

import hashlib
import math

#: Characters per token of the released extension's estimate (`CHARS_PER_TOKEN = 4`).
CHARS_PER_TOKEN = 4


def utf8(text: str) -> bytes:
    """`text` as UTF-8 bytes (lone surrogates kept, not refused)."""
    return text.encode("utf-8", "surrogatepass")


def utf8_len(text: str) -> int:
    """The size of `text` in UTF-8 bytes."""
    return len(utf8(text))


def sha256_text(text: str) -> str:
    """Hex SHA-256 of `text`'s UTF-8 bytes."""
    return hashlib.sha256(utf8(text)).hexdigest()


def estimate_tokens(text: str) -> int:
    """The released extension's token estimate: ceil(characters / 4). An estimate for bookkeeping, not a tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def count_lines(text: str) -> int:
    """Lines as the released code counts them: a trailing newline does not start a new line; "" has none."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
