"""Length-prefixed frames on a byte stream: the pipe between a cell and its method's process. Each frame is one
`codec` message (JSON), both ways."""

from __future__ import annotations

import struct
from typing import IO

_HEADER = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024  # a harness tree of a few hundred MB is the largest thing that crosses


class ChannelClosed(EOFError):
    """The other end of the pipe went away."""


def send_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def recv_frame(stream: IO[bytes]) -> bytes:
    head = _read(stream, _HEADER.size)
    (size,) = _HEADER.unpack(head)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the {MAX_FRAME}-byte limit")
    return _read(stream, size)


def _read(stream: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise ChannelClosed("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

