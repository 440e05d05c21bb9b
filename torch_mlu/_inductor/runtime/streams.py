"""Streams as Inductor's generated code names them."""
from __future__ import annotations


def get_raw_stream(device_index: int) -> int:
    """The id of the current stream of an mlu device (Inductor's `get_raw_stream`): the launchers of compiled
    kernels find the stream themselves, this id is what wrappers that ask for one get."""
    from ... import _state
    return _state.C.current_stream_id(device_index)
