"""Copies between cpu and mlu and between mlu tensors: aten::_copy_from (what copy_ / .to / .cpu / .mlu reach for a
PrivateUse1 tensor) and aten::_copy_from_and_resize.

- host -> device: cnrtMemcpyAsync on the destination's current stream. From pinned memory with non_blocking=True
  the copy stays queued (the host buffer must not change until the stream reaches it, as with CUDA); from pageable
  memory with non_blocking=True the bytes are staged first, so the call returns without waiting for the device;
  otherwise the call waits for the stream.
- device -> host: queued on the source's current stream; waited for, except into pinned memory with
  non_blocking=True (then torch.mlu.synchronize / an event tells when the bytes are there).
- device -> device: never waits. Same dtype: cnrtMemcpyAsync when both are dense, else cnnlCopy over the strided
  (and broadcast) views; another dtype: cnnlCastDataType; another device: cnrtMemcpyPeerAsync, ordered after the
  source stream's work and before the destination stream's later work by notifiers.
Broadcasting and dtype conversion of copy_ are done here, since copy_ hands a PrivateUse1 copy over as it is.
"""
from __future__ import annotations

import ctypes

import numpy as np
import torch

import cnnl
import cnrt

from .. import _state
from ._core import TORCH_TO_CNNL, desc, handle, register


def _queue(tensor: torch.Tensor):
    index = tensor.device.index
    return _state.runtime.streams.queue(index, _state.C.current_stream_id(index))


def host_bytes(tensor: torch.Tensor) -> np.ndarray:
    """A flat uint8 numpy view of a dense cpu tensor's bytes, which keeps the tensor alive (a queued copy may read
    it later). Not Tensor.numpy(): that makes the tensor's storage non-resizable for good."""
    raw = (ctypes.c_uint8 * (tensor.numel() * tensor.element_size())).from_address(tensor.data_ptr())
    raw.owner = tensor
    return np.frombuffer(raw, dtype=np.uint8)


def is_dense(tensor: torch.Tensor) -> bool:
    return tensor.is_contiguous()


def _nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()


def _pinned(tensor: torch.Tensor) -> bool:
    return _state.C.is_pinned_ptr(tensor.data_ptr())


def _check_writable(dst: torch.Tensor) -> None:
    if not dst.is_contiguous() and torch._debug_has_internal_overlap(dst) == 1:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


# ---- host -> device -------------------------------------------------------------------------------------------------
def _host_to_device(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool) -> None:
    staged = src.detach()
    if staged.dtype != dst.dtype:
        staged = staged.to(dst.dtype)
    if staged.shape != dst.shape:
        staged = staged.expand(dst.shape)
    staged = staged.resolve_conj().resolve_neg()
    if not is_dense(dst):
        _check_writable(dst)
        dense = torch.empty(dst.shape, dtype=dst.dtype, device=dst.device)
        _host_to_device(staged, dense, non_blocking=True)
        _device_to_device(dense, dst)
        return
    queue = _queue(dst)
    direct = staged.is_contiguous() and staged.data_ptr() == src.data_ptr() and staged.dtype == src.dtype
    if non_blocking and direct and _pinned(src):
        cnrt.memcpyAsync(dst.data_ptr(), host_bytes(staged), _nbytes(dst), queue, cnrt.cnrtMemcpyHostToDev)
        return
    if non_blocking:  # pageable: stage the bytes, so the caller may change its buffer at once
        data = host_bytes(staged.contiguous()).copy() if direct else host_bytes(staged.contiguous())
        cnrt.memcpyAsync(dst.data_ptr(), data, _nbytes(dst), queue, cnrt.cnrtMemcpyHostToDev)
        return
    cnrt.memcpyAsync(dst.data_ptr(), host_bytes(staged.contiguous()), _nbytes(dst), queue,
                     cnrt.cnrtMemcpyHostToDev)
    cnrt.queueSync(queue)


# ---- device -> host -------------------------------------------------------------------------------------------------
def _device_to_host(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool) -> None:
    dense = src if is_dense(src) else src.contiguous()
    exact = dst.dtype == src.dtype and dst.shape == src.shape and dst.is_contiguous() and \
        not dst.is_conj() and not dst.is_neg()
    target = dst if exact else torch.empty(src.shape, dtype=src.dtype)
    queue = _queue(dense)
    cnrt.memcpyAsync(host_bytes(target), dense.data_ptr(), _nbytes(dense), queue, cnrt.cnrtMemcpyDevToHost)
    if not (non_blocking and exact and _pinned(dst)):
        cnrt.queueSync(queue)
    if target is not dst:
        dst.copy_(target)


# ---- device -> device -----------------------------------------------------------------------------------------------
def _same_data(src: torch.Tensor, dst: torch.Tensor) -> bool:
    return (src.data_ptr() == dst.data_ptr() and src.dtype == dst.dtype and src.shape == dst.shape
            and src.stride() == dst.stride())


def _device_to_device(src: torch.Tensor, dst: torch.Tensor) -> None:
    if src.device != dst.device:
        _across_devices(src, dst)
        return
    if _same_data(src, dst):
        return
    if src.shape != dst.shape:
        src = src.expand(dst.shape)
    if src.dtype not in TORCH_TO_CNNL or dst.dtype not in TORCH_TO_CNNL:
        if src.dtype == dst.dtype:  # the same bytes: copy them as a type cnnl has
            _device_to_device(_as_cnnl_type(src), _as_cnnl_type(dst))
        else:  # convert on the host (complex, unsigned 16-64, float8: types cnnl cannot cast)
            dst.copy_(src.cpu().to(dst.dtype))
        return
    if not is_dense(dst):
        _check_writable(dst)
    if src.dtype == dst.dtype:
        if is_dense(src) and is_dense(dst):
            cnrt.memcpyAsync(dst.data_ptr(), src.data_ptr(), _nbytes(dst), _queue(dst), cnrt.cnrtMemcpyDevToDev)
        else:
            cnnl.copy(handle(dst), desc(src), src.data_ptr(), desc(dst), dst.data_ptr())
        return
    _cast(src, dst)


def _cast(src: torch.Tensor, dst: torch.Tensor) -> None:
    """dst = src converted (cnnlCastDataType; a conversion is as common as an add: autocast, .half(), .float()).

    cnnlCastDataType saturates integer results; torch's conversions to a narrower integer type keep the low bits
    (-1 -> uint8 is 255, 300 -> int8 is 44), and its CPU kernels take a float to uint8/int8/int16 through int32. Those
    conversions read the low bytes of the (int32) source instead. Floats beyond int32's range (undefined in C++)
    still saturate on the way to int32."""
    if dst.dtype in _WRAPPING_TARGETS:
        if src.is_floating_point() and dst.dtype in _NARROW_FROM_FLOAT:
            wide = torch.empty(src.shape, dtype=torch.int32, device=src.device)
            _cast(src, wide)
            src = wide
        if src.dtype in _INTEGERS and not _fits(src.dtype, dst.dtype):
            _device_to_device(_low_bytes(src, dst.dtype), dst)
            return
    cast = _CAST_TYPES[(src.dtype, dst.dtype)]
    cnnl.castDataType(handle(dst), desc(src), src.data_ptr(), cast, desc(dst), dst.data_ptr())


_INTEGERS = frozenset((torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64))
_WRAPPING_TARGETS = frozenset((torch.uint8, torch.int8, torch.int16, torch.int32))
_NARROW_FROM_FLOAT = frozenset((torch.uint8, torch.int8, torch.int16))


def _fits(source: torch.dtype, target: torch.dtype) -> bool:
    """Whether every value of the integer type `source` is one of `target`."""
    wide, narrow = torch.iinfo(source), torch.iinfo(target)
    return narrow.min <= wide.min and wide.max <= narrow.max


def _low_bytes(src: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A strided view, as `dtype`, of the low-order bytes of each element of `src` (made dense first): the value
    modulo 2^bits of `dtype` (little-endian, as the host and the device are)."""
    dense = src.contiguous().reshape(-1)
    ratio = src.element_size() // dtype.itemsize
    return dense.view(dtype)[::ratio].view(src.shape)


_SAME_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _as_cnnl_type(tensor: torch.Tensor) -> torch.Tensor:
    """A view of the same bytes as a dtype cnnl copies: complex as its real pairs, others as an integer type of
    the same size."""
    if tensor.is_complex():
        return torch.view_as_real(tensor)
    return tensor.view(_SAME_SIZE[tensor.element_size()])


_CAST_NAMES = {torch.float32: "FLOAT", torch.float16: "HALF", torch.bfloat16: "BFLOAT16", torch.float64: "DOUBLE",
               torch.int8: "INT8", torch.int16: "INT16", torch.int32: "INT32", torch.int64: "INT64",
               torch.uint8: "UINT8", torch.bool: "BOOL"}
#: (source dtype, target dtype) -> cnnlCastDataType_t
_CAST_TYPES = {(source, target): getattr(cnnl, f"CNNL_CAST_{a}_TO_{b}")
               for source, a in _CAST_NAMES.items() for target, b in _CAST_NAMES.items() if source != target}


def _across_devices(src: torch.Tensor, dst: torch.Tensor) -> None:
    """A copy from one mlu device to another: the source is first made dense in the destination's dtype on its own
    device; cnrtMemcpyPeerAsync runs on the destination's current stream after the source stream's work, and the
    source stream waits for the copy before it may reuse the source."""
    staged = src
    if staged.dtype != dst.dtype or staged.shape != dst.shape or not is_dense(staged):
        staged = torch.empty(dst.shape, dtype=dst.dtype, device=src.device)
        _device_to_device(src.expand(dst.shape) if src.shape != dst.shape else src, staged)
    target = dst if is_dense(dst) else torch.empty(dst.shape, dtype=dst.dtype, device=dst.device)
    src_queue, dst_queue = _queue(staged), _queue(target)
    ready = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
    cnrt.placeNotifier(ready, src_queue)
    cnrt.queueWaitNotifier(ready, dst_queue, 0)
    cnrt.memcpyPeerAsync(target.data_ptr(), target.device.index, staged.data_ptr(), staged.device.index,
                         _nbytes(target), dst_queue)
    done = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
    cnrt.placeNotifier(done, dst_queue)
    cnrt.queueWaitNotifier(done, src_queue, 0)
    if target is not dst:
        _device_to_device(target, dst)


# ---- the registered kernels -----------------------------------------------------------------------------------------
def copy_into(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """dst.copy_(src) for a copy that involves an mlu tensor."""
    if dst.numel() == 0:
        return dst
    if dst.is_conj() or dst.is_neg():  # write the plain view of dst with src's values conjugated / negated alike
        if dst.is_conj():
            copy_into(src.conj(), dst.conj(), non_blocking)
        else:
            copy_into(torch._neg_view(src), torch._neg_view(dst), non_blocking)
        return dst
    if src.device.type == "mlu" and (src.is_conj() or src.is_neg()):
        _resolved_to(src, dst)
        return dst
    if src.device.type == "mlu" and dst.device.type == "mlu":
        _device_to_device(src, dst)
    elif dst.device.type == "mlu":
        _host_to_device(src, dst, non_blocking)
    elif src.device.type == "mlu":
        _device_to_host(src, dst, non_blocking)
    else:
        dst.copy_(src, non_blocking=non_blocking)
    return dst


def _resolved_to(src: torch.Tensor, dst: torch.Tensor) -> None:
    """Copy a conjugate or negative view of mlu memory: its plain values go to the host, where the bits resolve."""
    plain, conjugate, negative = src, src.is_conj(), src.is_neg()
    if conjugate:
        plain = plain.conj()
    if negative:
        plain = torch._neg_view(plain)
    host = torch.empty(plain.shape, dtype=plain.dtype)
    _device_to_host(plain, host, non_blocking=False)
    if conjugate:
        host = host.conj()
    if negative:
        host = torch._neg_view(host)
    dst.copy_(host.resolve_conj().resolve_neg())


@register("aten::_copy_from")
def copy_from(self: torch.Tensor, dst: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    """aten::_copy_from(self, dst, non_blocking): dst <- self, across devices and dtypes."""
    return copy_into(self, dst, non_blocking)


@register("aten::_copy_from_and_resize")
def copy_from_and_resize(self: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """aten::_copy_from_and_resize(self, dst): resize dst to self's shape, then copy."""
    if dst.shape != self.shape:
        dst.resize_(self.shape)
    return copy_into(self, dst)


@register("aten::_local_scalar_dense")
def local_scalar_dense(self: torch.Tensor):
    """aten::_local_scalar_dense(self) (Tensor.item()): one element copied to the host, waiting for the stream."""
    host = torch.empty(self.shape, dtype=self.dtype)
    copy_into(self, host)
    return host.item()
