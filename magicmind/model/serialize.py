"""The serialized model: a versioned container with a checksum.

    magic    8 bytes  b"MLUSIMMM"
    version  u32      FORMAT_VERSION (little endian)
    length   u64      bytes of the payload
    digest   32 bytes SHA-256 of the payload
    payload  u32 length of the JSON header, the header (UTF-8), then the arrays' bytes back to back

The header holds the program (values, steps, inputs, outputs, ranges) and the model's metadata; an array
(a constant, or an array-valued attribute) is {"__array__": [offset, nbytes, dtype, shape]} into the bytes that
follow. A file that is too short, has another magic or version, or whose digest does not match is refused with a
DATA_LOSS / INVALID_ARGUMENT error naming what is wrong; nothing of it is used.
"""
from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

from ..graph.program import Program, Step, Value
from ..status import Code, MagicMindError

MAGIC = b"MLUSIMMM"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<8sIQ32s")


class _Arrays:
    def __init__(self):
        self.chunks, self.offset = [], 0

    def add(self, array: np.ndarray) -> dict:
        array = np.array(array, order="C")
        data = array.tobytes()
        entry = {"__array__": [self.offset, len(data), array.dtype.str, list(array.shape)]}
        self.chunks.append(data)
        self.offset += len(data)
        return entry


def _encode(value, arrays: _Arrays):
    if isinstance(value, np.ndarray):
        return arrays.add(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {"__dict__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return [_encode(v, arrays) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise MagicMindError(Code.INTERNAL, f"serialize: cannot store a {type(value).__name__}")


def _decode(value, blob: memoryview):
    if isinstance(value, dict):
        if "__array__" in value:
            offset, nbytes, dtype, shape = value["__array__"]
            if offset < 0 or nbytes < 0 or offset + nbytes > len(blob):
                raise MagicMindError(Code.DATA_LOSS, "deserialize: an array lies outside the file's data")
            array = np.frombuffer(blob[offset:offset + nbytes], dtype=np.dtype(dtype)).reshape(shape)
            return array.copy()
        if "__tuple__" in value:
            return tuple(_decode(v, blob) for v in value["__tuple__"])
        if "__dict__" in value:
            return {_decode(k, blob): _decode(v, blob) for k, v in value["__dict__"]}
        raise MagicMindError(Code.DATA_LOSS, "deserialize: unknown entry in the header")
    if isinstance(value, list):
        return [_decode(v, blob) for v in value]
    return value


def dumps(program: Program, meta: dict) -> bytes:
    """The bytes of a serialized model."""
    arrays = _Arrays()
    values = {str(k): {"name": v.name, "dtype": v.dtype.str, "shape": None if v.shape is None else list(v.shape),
                       "const": None if v.const is None else arrays.add(v.const)}
              for k, v in program.values.items()}
    steps = [{"op": s.op, "attrs": _encode(s.attrs, arrays), "ins": s.ins, "outs": s.outs, "name": s.name}
             for s in program.steps]
    header = {"values": values, "steps": steps, "inputs": program.inputs, "outputs": program.outputs,
              "ranges": _encode(program.ranges, arrays), "next": program._next, "meta": _encode(meta, arrays)}
    text = json.dumps(header, separators=(",", ":")).encode()
    payload = struct.pack("<I", len(text)) + text + b"".join(arrays.chunks)
    return _HEAD.pack(MAGIC, FORMAT_VERSION, len(payload), hashlib.sha256(payload).digest()) + payload


def loads(data) -> tuple:
    """(Program, meta) of serialized bytes; MagicMindError for anything that is not a whole, intact model."""
    try:
        view = memoryview(data).cast("B")
    except TypeError:
        raise MagicMindError(Code.INVALID_ARGUMENT, "deserialize: the buffer is not bytes-like") from None
    if len(view) < _HEAD.size:
        raise MagicMindError(Code.DATA_LOSS, f"deserialize: {len(view)} bytes is shorter than a model header "
                                             f"({_HEAD.size} bytes): truncated or not a model")
    magic, version, length, digest = _HEAD.unpack_from(view)
    if magic != MAGIC:
        raise MagicMindError(Code.INVALID_ARGUMENT, "deserialize: not a MagicMind model of this simulator (bad magic)")
    if version != FORMAT_VERSION:
        raise MagicMindError(Code.INVALID_ARGUMENT, f"deserialize: model format version {version}; this build reads "
                                                    f"version {FORMAT_VERSION}")
    payload = view[_HEAD.size:]
    if len(payload) != length:
        raise MagicMindError(Code.DATA_LOSS, f"deserialize: the model holds {len(payload)} bytes of data, its header "
                                             f"says {length}: truncated or padded")
    if hashlib.sha256(payload).digest() != digest:
        raise MagicMindError(Code.DATA_LOSS, "deserialize: checksum mismatch: the model is corrupt")
    try:
        (size,) = struct.unpack_from("<I", payload)
        header = json.loads(bytes(payload[4:4 + size]))
        blob = payload[4 + size:]
        program = Program()
        for key, v in header["values"].items():
            program.values[int(key)] = Value(v["name"], np.dtype(v["dtype"]),
                                             None if v["shape"] is None else tuple(v["shape"]),
                                             None if v["const"] is None else _decode(v["const"], blob))
        program.steps = [Step(s["op"], _decode(s["attrs"], blob), s["ins"], s["outs"], s["name"])
                         for s in header["steps"]]
        program.inputs, program.outputs = header["inputs"], header["outputs"]
        program.ranges = _decode(header["ranges"], blob)
        program._next = header["next"]
        meta = _decode(header["meta"], blob)
    except MagicMindError:
        raise
    except (KeyError, TypeError, ValueError, struct.error) as error:
        raise MagicMindError(Code.DATA_LOSS, f"deserialize: malformed model header ({error})") from None
    return program, meta
