"""Length-prefixed frames on a byte stream: the pipe between a cell and its method's process. The cell sends pickles
(the child trusts its parent); the child sends JSON (the cell never unpickles what a method wrote)."""

from __future__ import annotations

import json
import pickle
import struct
from typing import IO, Any

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


def send_pickle(stream: IO[bytes], value: Any) -> None:
    send_frame(stream, pickle.dumps(value))


def recv_pickle(stream: IO[bytes]) -> Any:
    return pickle.loads(recv_frame(stream))


def send_json(stream: IO[bytes], value: Any) -> None:
    send_frame(stream, json.dumps(value).encode())


def recv_json(stream: IO[bytes]) -> Any:
    return json.loads(recv_frame(stream))
