"""Pooling over cnnl, forward and backward: max pooling with indices (cnnlPoolingForwardWithIndex; its backward
reads the indices) and average pooling (cnnlPoolingForward) in 2-D and 3-D, adaptive average pooling 2-D
(cnnlAdaptivePoolingForward_v2 / Backward) and adaptive max pooling 2-D with indices (cnnlAdaptivePoolingForward /
Backward in MAX mode).

Unbatched inputs ([C, H, W]) get a batch of 1. Channels-last inputs are described NHWC (NDHWC) over the same
memory, and their results are channels-last too, as torch's.
"""
from __future__ import annotations

import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, aten, check_same_device, fallback, feature_desc, handle, register, workspace
from ._iter import Destination, resize_out

MAX, AVG_INCLUDE, AVG_EXCLUDE = (cnnl.CNNL_POOLING_MAX, cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                                 cnnl.CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)
_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to


def _pool_descriptor(rank: int, mode: int, kernel, padding, stride, dilation, ceil_mode: bool):
    key = (rank, mode, tuple(kernel), tuple(padding), tuple(stride), tuple(dilation), bool(ceil_mode))
    found = _descriptors.get(key)
    if found is None:
        found = cnnl.createPoolingDescriptor()
        if rank == 4:
            (kh, kw), (ph, pw), (sh, sw), (dh, dw) = kernel, padding, stride, dilation
            cnnl.setPooling2dDescriptor_v2(found, mode, cnnl.CNNL_PROPAGATE_NAN, kh, kw, ph, ph, pw, pw, sh, sw, dh,
                                           dw, bool(ceil_mode))
        else:
            cnnl.setPoolingNdDescriptor_v2(found, mode, cnnl.CNNL_PROPAGATE_NAN, rank, list(kernel), list(padding),
                                           list(stride), list(dilation), bool(ceil_mode))
        _descriptors.put(key, found)
    return found


_COUNT_WORDS = {2: "two", 3: "three"}


def _expand(value, n: int, name: str, op: str) -> list[int]:
    """`value` (an int or a 1- or n-element sequence) as n ints; torch's message for another length."""
    values = [value] if isinstance(value, int) else list(value)
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        if name == "output_size":
            raise RuntimeError(f"{op}: output_size must be {n}")
        rule = {"kernel_size": "must be a single int" if op.startswith("avg") else "must either be a single int",
                "stride": "must either be omitted, a single int", "padding": "must either be a single int",
                "dilation": "must be either a single int"}[name]
        raise RuntimeError(f"{op}: {name} {rule}, or a tuple of {_COUNT_WORDS.get(n, n)} ints")
    return values


def output_extent(size: int, kernel: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _channel_last(t: torch.Tensor) -> bool:
    fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
    return t.dim() in (4, 5) and t.is_contiguous(memory_format=fmt) and not t.is_contiguous()


def _empty(shape, like: torch.Tensor, channel_last: bool, dtype=None) -> torch.Tensor:
    fmt = (torch.channels_last if len(shape) == 4 else torch.channels_last_3d) if channel_last else \
        torch.contiguous_format
    return torch.empty(shape, dtype=dtype or like.dtype, device=like.device, memory_format=fmt)


class _Window:
    """The pooling parameters of one call, checked as torch checks them, and the batched input."""

    def __init__(self, name: str, self_, spatial: int, kernel, stride, padding, dilation, ceil_mode):
        if self_.dim() not in (spatial + 1, spatial + 2):
            raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input tensor")
        self.unbatched = self_.dim() == spatial + 1
        self.input = self_.unsqueeze(0) if self.unbatched else self_
        self.kernel = _expand(kernel, spatial, "kernel_size", name)
        self.stride = _expand(stride, spatial, "stride", name) if stride else list(self.kernel)
        self.padding = _expand(padding, spatial, "padding", name)
        self.dilation = _expand(dilation, spatial, "dilation", name)
        self.ceil_mode = ceil_mode
        if any(p * 2 > k for p, k in zip(self.padding, self.kernel)):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={self.padding[0]}, "
                               f"kernel_size={self.kernel[0]} and dilation={self.dilation[0]}")
        sizes = self.input.shape[2:]
        self.out_spatial = [output_extent(n, k, p, s, d, ceil_mode) for n, k, p, s, d in
                            zip(sizes, self.kernel, self.padding, self.stride, self.dilation)]
        if any(o <= 0 for o in self.out_spatial):
            raise RuntimeError(f"Given input size: ({'x'.join(map(str, self.input.shape[1:]))}). Calculated output "
                               f"size: ({'x'.join(map(str, [self.input.shape[1], *self.out_spatial]))}). Output size is "
                               f"too small")
        self.out_shape = (*self.input.shape[:2], *self.out_spatial)
        self.channel_last = _channel_last(self.input)
        self.rank = self.input.dim()

    def descriptor(self, mode: int):
        return _pool_descriptor(self.rank, mode, self.kernel, self.padding, self.stride, self.dilation, self.ceil_mode)

    def batched(self, t: torch.Tensor) -> torch.Tensor:
        """A result of the user's shape with the batch axis the kernels see."""
        return t.unsqueeze(0) if self.unbatched else t

    def shaped(self, t: torch.Tensor) -> torch.Tensor:
        return t.squeeze(0) if self.unbatched else t

    def user_shape(self) -> tuple:
        return self.out_shape[1:] if self.unbatched else self.out_shape


def _native(*tensors) -> bool:
    return all(t.device.type == "mlu" and t.dtype in FLOATING for t in tensors if t is not None)


# ---- max pooling ----------------------------------------------------------------------------------------------------
#: the largest 2-d max pooling window torch_mlu takes on the card (kernel_h * kernel_w below it): its rule, kept so
#: that what runs here runs there
MAX_POOL2D_KERNEL = 1535


def _max_pool(name: str, spatial: int, self, kernel, stride, padding, dilation, ceil_mode, out, indices, overload):
    check_same_device(self, out, indices)
    if not _native(self):
        return fallback(overload, self, kernel, stride, padding, dilation, ceil_mode, out=out, indices=indices)
    window = _Window(name, self, spatial, kernel, stride, padding, dilation, ceil_mode)
    if spatial == 2 and window.kernel[0] * window.kernel[1] >= MAX_POOL2D_KERNEL:
        raise RuntimeError(f"max_pool2d: The kernel size should be smaller than {MAX_POOL2D_KERNEL}, while this "
                           f"kernel size is {window.kernel[0] * window.kernel[1]}")
    x = window.input
    direct = (_writable_in_place(out, window, x) and _writable_in_place(indices, window, x, torch.int64)
              and out.untyped_storage().data_ptr() != indices.untyped_storage().data_ptr())
    if direct:  # (the outputs torch's meta function allocated): written by the kernel itself, no copies
        values, index = window.batched(out), window.batched(indices)
    else:
        values = _empty(window.out_shape, x, window.channel_last)
        index = _empty(window.out_shape, x, window.channel_last, torch.int64)
    if values.numel() and x.numel():
        x_desc, y_desc = feature_desc(x, window.channel_last), feature_desc(values, window.channel_last)
        i_desc = feature_desc(index, window.channel_last)
        h = handle(values)
        size = cnnl.getPoolingWithIndexWorkspaceSize(h, x_desc, y_desc)
        ws, _keep = workspace(size, x.device)
        cnnl.poolingForwardWithIndex(h, window.descriptor(MAX), 1.0, x_desc, x.data_ptr(), 0.0, y_desc,
                                     values.data_ptr(), i_desc, index.data_ptr(), ws, size)
    if not direct:
        for result, target in ((values, out), (index, indices)):
            resize_out(target, window.user_shape())
            target.copy_(window.shaped(result))
    return out, indices


def _writable_in_place(target: torch.Tensor, window: "_Window", source: torch.Tensor, dtype=None) -> bool:
    """True when the pooling kernel can write `target` itself: it already has the result's shape and dtype, is
    dense in the memory format of the input (channel-last or not) and lies apart from `source`."""
    if tuple(target.shape) != tuple(window.user_shape()) or target.dtype != (dtype or source.dtype):
        return False
    if target.device != source.device or target.numel() == 0:
        return False
    return (_dense_in_format(window.batched(target), window.channel_last)
            and target.untyped_storage().data_ptr() != source.untyped_storage().data_ptr())


def _gradient_buffer(target: Destination, window: "_Window", inputs) -> tuple:
    """(where a pooling gradient is computed, True when that is the destination itself): the destination when it
    is dense in the input's memory format and apart from the `inputs`, else a new tensor to copy from."""
    candidate = window.batched(target.target)
    storage = candidate.untyped_storage().data_ptr()
    if _dense_in_format(candidate, window.channel_last) and all(
            t.untyped_storage().data_ptr() != storage for t in inputs):
        return candidate, True
    return _empty(window.input.shape, window.input, window.channel_last), False


def _dense_in_format(t: torch.Tensor, channel_last: bool) -> bool:
    """True when the (batched) tensor is dense channel-last (`channel_last`) or dense contiguous."""
    if channel_last:
        return t.is_contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    return t.is_contiguous()


@register("aten::max_pool2d_with_indices.out")
def max_pool2d_with_indices_out(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, out,
                                indices):
    """aten::max_pool2d_with_indices.out(...) (cnnlPoolingForwardWithIndex; indices are h * W + w)."""
    return _max_pool("max_pool2d", 2, self, kernel_size, stride, padding, dilation, ceil_mode, out, indices,
                     aten.max_pool2d_with_indices.out)


@register("aten::max_pool3d_with_indices.out")
def max_pool3d_with_indices_out(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False, *, out,
                                indices):
    """aten::max_pool3d_with_indices.out(...) (indices are d * H * W + h * W + w)."""
    return _max_pool("max_pool3d", 3, self, kernel_size, stride, padding, dilation, ceil_mode, out, indices,
                     aten.max_pool3d_with_indices.out)


@register("aten::max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """aten::max_pool3d_with_indices(...) -> (values, indices)."""
    out = torch.empty(0, dtype=self.dtype, device=self.device)
    indices = torch.empty(0, dtype=torch.int64, device=self.device)
    return max_pool3d_with_indices_out(self, kernel_size, stride, padding, dilation, ceil_mode, out=out,
                                       indices=indices)


def _max_pool_backward(name: str, spatial: int, grad_output, self, kernel, stride, padding, dilation, ceil_mode,
                       indices, grad_input, overload):
    check_same_device(grad_output, self, indices, grad_input)
    if not _native(self, grad_output) or indices.dtype not in (torch.int32, torch.int64):
        return fallback(overload, grad_output, self, kernel, stride, padding, dilation, ceil_mode, indices,
                        grad_input=grad_input)
    window = _Window(name, self, spatial, kernel, stride, padding, dilation, ceil_mode)
    target = Destination(grad_input, self.shape, self.dtype, (grad_output,))
    dx, direct = _gradient_buffer(target, window, (grad_output, indices))
    if dx.numel():
        if grad_output.numel() == 0:
            dx.zero_()
        else:
            dy = grad_output.unsqueeze(0) if window.unbatched else grad_output
            index = indices.unsqueeze(0) if window.unbatched else indices
            if window.channel_last:
                fmt = torch.channels_last if dx.dim() == 4 else torch.channels_last_3d
                dy, index = dy.contiguous(memory_format=fmt), index.contiguous(memory_format=fmt)
            h = handle(dx)
            cnnl.poolingBackward(h, window.descriptor(MAX), 1.0, feature_desc(index, window.channel_last),
                                 index.data_ptr(), feature_desc(dy, window.channel_last), dy.data_ptr(), None, None,
                                 0.0, feature_desc(dx, window.channel_last), dx.data_ptr())
    if not direct:
        target.target.copy_(window.shaped(dx))
    return target.finish()


@register("aten::max_pool2d_with_indices_backward.grad_input")
def max_pool2d_with_indices_backward_out(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                         indices, *, grad_input):
    """aten::max_pool2d_with_indices_backward.grad_input(...) (cnnlPoolingBackward reading the indices)."""
    return _max_pool_backward("max_pool2d", 2, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                              indices, grad_input, aten.max_pool2d_with_indices_backward.grad_input)


@register("aten::max_pool3d_with_indices_backward.grad_input")
def max_pool3d_with_indices_backward_out(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                         indices, *, grad_input):
    """aten::max_pool3d_with_indices_backward.grad_input(...)."""
    return _max_pool_backward("max_pool3d", 3, grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                              indices, grad_input, aten.max_pool3d_with_indices_backward.grad_input)


@register("aten::max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    """aten::max_pool3d_with_indices_backward(...)."""
    return max_pool3d_with_indices_backward_out(grad_output, self, kernel_size, stride, padding, dilation,
                                                ceil_mode, indices, grad_input=torch.empty_like(self))


# ---- average pooling ------------------------------------------------------------------------------------------------
def _avg_mode(count_include_pad: bool) -> int:
    return AVG_INCLUDE if count_include_pad else AVG_EXCLUDE


def _avg_pool(name: str, spatial: int, self, kernel, stride, padding, ceil_mode, count_include_pad,
              divisor_override, out, overload):
    check_same_device(self, out)
    if not _native(self) or divisor_override is not None:
        return fallback(overload, self, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override,
                        out=out)
    window = _Window(name, self, spatial, kernel, stride, padding, 1, ceil_mode)
    x = window.input
    y = _empty(window.out_shape, x, window.channel_last)
    if y.numel() and x.numel():
        x_desc, y_desc = feature_desc(x, window.channel_last), feature_desc(y, window.channel_last)
        h = handle(y)
        mode = _avg_mode(count_include_pad)
        size = cnnl.getPoolingWorkspaceSize(h, mode, window.out_spatial[-1],
                                            window.out_spatial[-2] if spatial > 1 else 1)
        ws, _keep = workspace(size, x.device)
        cnnl.poolingForward(h, window.descriptor(mode), 1.0, x_desc, x.data_ptr(), 0.0, y_desc, y.data_ptr(), ws,
                            size)
    resize_out(out, window.user_shape())
    out.copy_(window.shaped(y))
    return out


@register("aten::avg_pool2d.out")
def avg_pool2d_out(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None, *, out):
    """aten::avg_pool2d.out(...) (cnnlPoolingForward; a divisor_override runs on the CPU fallback)."""
    return _avg_pool("avg_pool2d", 2, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, out, aten.avg_pool2d.out)


@register("aten::avg_pool3d.out")
def avg_pool3d_out(self, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None, *, out):
    """aten::avg_pool3d.out(...)."""
    return _avg_pool("avg_pool3d", 3, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, out, aten.avg_pool3d.out)


def _avg_pool_backward(name: str, spatial: int, grad_output, self, kernel, stride, padding, ceil_mode,
                       count_include_pad, divisor_override, grad_input, overload):
    check_same_device(grad_output, self, grad_input)
    if not _native(self, grad_output) or divisor_override is not None:
        return fallback(overload, grad_output, self, kernel, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, grad_input=grad_input)
    window = _Window(name, self, spatial, kernel, stride, padding, 1, ceil_mode)
    target = Destination(grad_input, self.shape, self.dtype, (grad_output,))
    dx, direct = _gradient_buffer(target, window, (grad_output,))
    if dx.numel():
        if grad_output.numel() == 0:
            dx.zero_()
        else:
            dy = grad_output.unsqueeze(0) if window.unbatched else grad_output
            if window.channel_last:
                dy = dy.contiguous(memory_format=torch.channels_last if dx.dim() == 4 else torch.channels_last_3d)
            h = handle(dx)
            cnnl.poolingBackward(h, window.descriptor(_avg_mode(count_include_pad)), 1.0, None, None,
                                 feature_desc(dy, window.channel_last), dy.data_ptr(), None, None, 0.0,
                                 feature_desc(dx, window.channel_last), dx.data_ptr())
    if not direct:
        target.target.copy_(window.shaped(dx))
    return target.finish()


@register("aten::avg_pool2d_backward.grad_input")
def avg_pool2d_backward_out(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override, *, grad_input):
    """aten::avg_pool2d_backward.grad_input(...) (cnnlPoolingBackward)."""
    return _avg_pool_backward("avg_pool2d", 2, grad_output, self, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override, grad_input, aten.avg_pool2d_backward.grad_input)


@register("aten::avg_pool3d_backward.grad_input")
def avg_pool3d_backward_out(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override, *, grad_input):
    """aten::avg_pool3d_backward.grad_input(...)."""
    return _avg_pool_backward("avg_pool3d", 3, grad_output, self, kernel_size, stride, padding, ceil_mode,
                              count_include_pad, divisor_override, grad_input, aten.avg_pool3d_backward.grad_input)


# ---- adaptive pooling -----------------------------------------------------------------------------------------------
def _adaptive_input(self, output_size, spatial: int):
    if self.dim() not in (spatial + 1, spatial + 2):  # torch_mlu's words ("got:"; torch's CPU kernel: "got")
        raise RuntimeError(f"adaptive_avg_pool{spatial}d(): Expected {spatial + 1}D or {spatial + 2}D tensor, but "
                           f"got: {list(self.shape)}")
    sizes = _expand(output_size, spatial, "output_size", f"adaptive_avg_pool{spatial}d")
    unbatched = self.dim() == spatial + 1
    return (self.unsqueeze(0) if unbatched else self), sizes, unbatched


@register("aten::_adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    """aten::_adaptive_avg_pool2d(self, output_size) (cnnlAdaptivePoolingForward_v2)."""
    if not _native(self) or any(n == 0 for n in self.shape[-2:]):
        return fallback(aten._adaptive_avg_pool2d.default, self, output_size)
    x, sizes, unbatched = _adaptive_input(self, output_size, 2)
    channel_last = _channel_last(x)
    y = _empty((*x.shape[:2], *sizes), x, channel_last)
    if y.numel():
        x_desc, y_desc = feature_desc(x, channel_last), feature_desc(y, channel_last)
        h = handle(y)
        size = cnnl.getAdaptivePoolingForwardWorkspaceSize(h, x_desc, AVG_EXCLUDE, y_desc)
        ws, _keep = workspace(size, x.device)
        cnnl.adaptivePoolingForward_v2(h, x_desc, x.data_ptr(), AVG_EXCLUDE, ws, size, y_desc, y.data_ptr(), None,
                                       None)
    return y.squeeze(0) if unbatched else y


@register("aten::_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward(grad_output, self):
    """aten::_adaptive_avg_pool2d_backward(grad_output, self) (cnnlAdaptivePoolingBackward)."""
    if not _native(self, grad_output) or any(n == 0 for n in self.shape[-2:]):
        return fallback(aten._adaptive_avg_pool2d_backward.default, grad_output, self)
    unbatched = self.dim() == 3
    x = self.unsqueeze(0) if unbatched else self
    dy = grad_output.unsqueeze(0) if unbatched else grad_output
    channel_last = _channel_last(x)
    dy = dy.contiguous(memory_format=torch.channels_last) if channel_last else dy
    dx = _empty(x.shape, x, channel_last)
    if dx.numel():
        cnnl.adaptivePoolingBackward(handle(dx), feature_desc(dy, channel_last), dy.data_ptr(), None, None,
                                     AVG_EXCLUDE, feature_desc(dx, channel_last), dx.data_ptr())
    return dx.squeeze(0) if unbatched else dx


@register("aten::adaptive_avg_pool3d.out")
def adaptive_avg_pool3d_out(self, output_size, *, out):
    """aten::adaptive_avg_pool3d.out(self, output_size, *, out): the pooled values copied into `out` whatever its
    layout. torch's CPU kernel writes a channels-last or strided out as if it were contiguous (wrong values): the
    result is computed by _adaptive_avg_pool3d and copied, so out= gives what the functional form gives."""
    check_same_device(self, out)
    if self.device.type != "mlu" or out.dtype != self.dtype:
        return fallback(aten.adaptive_avg_pool3d.out, self, output_size, out=out)
    result = aten._adaptive_avg_pool3d.default(self, output_size)
    resize_out(out, result.shape)
    out.copy_(result)
    return out


def _adaptive_max_input(self, output_size):
    """(batched input, output sizes, unbatched) when the mlu kernel serves the call, else None (the CPU fallback
    then gives torch's own result or error: wrong ranks, empty planes, negative sizes)."""
    if not _native(self) or self.dim() not in (3, 4) or any(n == 0 for n in self.shape[1:]):
        return None
    sizes = _expand(output_size, 2, "output_size", "adaptive_max_pool2d")
    if any(s <= 0 for s in sizes):
        return None
    unbatched = self.dim() == 3
    return (self.unsqueeze(0) if unbatched else self), sizes, unbatched


@register("aten::adaptive_max_pool2d.out")
def adaptive_max_pool2d_out(self, output_size, *, out, indices):
    """aten::adaptive_max_pool2d.out(self, output_size, *, out, indices) (cnnlAdaptivePoolingForward, MAX mode;
    indices are h * W + w)."""
    check_same_device(self, out, indices)
    found = _adaptive_max_input(self, output_size)
    if found is None:
        return fallback(aten.adaptive_max_pool2d.out, self, output_size, out=out, indices=indices)
    x, sizes, unbatched = found
    channel_last = _channel_last(x)
    shape = (*x.shape[:2], *sizes)
    values, index = _empty(shape, x, channel_last), _empty(shape, x, channel_last, torch.int64)
    if values.numel():
        cnnl.adaptivePoolingForward(handle(values), feature_desc(x, channel_last), x.data_ptr(), MAX,
                                    feature_desc(values, channel_last), values.data_ptr(),
                                    feature_desc(index, channel_last), index.data_ptr())
    for result, target in ((values, out), (index, indices)):
        resize_out(target, result.shape[1:] if unbatched else result.shape)
        target.copy_(result.squeeze(0) if unbatched else result)
    return out, indices


@register("aten::adaptive_max_pool2d_backward.grad_input")
def adaptive_max_pool2d_backward_out(grad_output, self, indices, *, grad_input):
    """aten::adaptive_max_pool2d_backward.grad_input(grad_output, self, indices, *, grad_input)
    (cnnlAdaptivePoolingBackward, MAX mode, with the forward's indices)."""
    check_same_device(grad_output, self, indices, grad_input)
    found = _adaptive_max_input(self, list(grad_output.shape[-2:]))
    if found is None or not _native(grad_output) or grad_output.dtype != self.dtype \
            or indices.dtype != torch.int64 or indices.shape != grad_output.shape:
        return fallback(aten.adaptive_max_pool2d_backward.grad_input, grad_output, self, indices,
                        grad_input=grad_input)
    x, _, unbatched = found
    dy = grad_output.unsqueeze(0) if unbatched else grad_output
    where = indices.unsqueeze(0) if unbatched else indices
    channel_last = _channel_last(x)
    fmt = torch.channels_last if channel_last else torch.contiguous_format
    dy, where = dy.contiguous(memory_format=fmt), where.contiguous(memory_format=fmt)
    dx = _empty(x.shape, x, channel_last)
    if dx.numel():
        cnnl.adaptivePoolingBackward(handle(dx), feature_desc(dy, channel_last), dy.data_ptr(),
                                     feature_desc(where, channel_last), where.data_ptr(), MAX,
                                     feature_desc(dx, channel_last), dx.data_ptr())
    resize_out(grad_input, self.shape)
    grad_input.copy_(dx.squeeze(0) if unbatched else dx)
    return grad_input

