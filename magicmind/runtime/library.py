"""Layers the engine runs through CNNL's public API: pooling, softmax, layer normalisation and resize.

Why CNNL for these: they are layers MagicMind leaves unfused (a fused layer ends at them), whose semantics CNNL's
calls cover exactly (pooling windows with ceil mode and dilation, softmax along one axis, row normalisation with
its weights, every ONNX resize rule), and whose kernels are the host's fastest there are; a second copy of them
here would only be slower. Each layer is prepared once per set of input shapes (its descriptors made and kept by
the context's shape plan) and issued with device addresses on the context's cnnl handle, bound to the queue of the
enqueue: one public call, one command on that queue.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

import cnnl

from ..graph.ops.nn import pool_geometry, resize_rule
from ..graph.ops.shapes import axis_of
from ..status import Code, MagicMindError

_DTYPES = {np.dtype(np.float32): cnnl.CNNL_DTYPE_FLOAT, np.dtype(np.float16): cnnl.CNNL_DTYPE_HALF,
           np.dtype(np.float64): cnnl.CNNL_DTYPE_DOUBLE}


def cnnl_dtype(dtype, node: str) -> int:
    found = _DTYPES.get(np.dtype(dtype))
    if found is None:
        raise MagicMindError(Code.UNIMPLEMENTED, f"node {node!r}: {np.dtype(dtype)} is not computed by this layer "
                                                 f"(float16, float32, float64)")
    return found


def tensor(layout: int, dtype, dims: Sequence[int], node: str):
    """A set cnnl tensor descriptor (a 0-d tensor is described as {1})."""
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, layout, cnnl_dtype(dtype, node), list(dims) or [1])
    return desc


class LibraryLayer:
    """One prepared layer: `issue(handle, inputs, outputs, workspace)` with device addresses; `workspace` bytes of
    scratch it needs; `destroy()` frees its descriptors."""

    def __init__(self, call: Callable, workspace: int = 0, descriptors: Sequence = ()):
        self._call, self.workspace, self._descriptors = call, workspace, list(descriptors)

    def issue(self, handle, inputs: Sequence[int], outputs: Sequence[int], workspace: int) -> None:
        self._call(handle, inputs, outputs, workspace)

    def destroy(self) -> None:
        for desc in self._descriptors:
            try:
                cnnl.destroyTensorDescriptor(desc)
            except cnnl.CnnlError:
                pass
        self._descriptors = []


def _pool(step, ins, outs) -> LibraryLayer:
    x, y = ins[0], outs[0]
    layout = step.attrs.get("layout", "NCHW")
    windows = pool_geometry(step.attrs, x.shape, layout)
    kernel, strides, dilations, pads = windows
    x_dims, y_dims = list(x.shape), list(y.shape)
    if len(x_dims) == 3:  # 1-D pooling as 2-D over rows of height 1
        axis = 2 if layout == "NCHW" else 1
        x_dims.insert(axis, 1)
        y_dims.insert(axis, 1)
    cnnl_layout = cnnl.CNNL_LAYOUT_NCHW if layout == "NCHW" else cnnl.CNNL_LAYOUT_NHWC
    xd, yd = tensor(cnnl_layout, x.dtype, x_dims, step.name), tensor(cnnl_layout, y.dtype, y_dims, step.name)
    pool = cnnl.createPoolingDescriptor()
    if step.attrs["mode"] == "max":
        mode = cnnl.CNNL_POOLING_MAX
    elif step.attrs.get("count_include_pad", 0):
        mode = cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
    else:
        mode = cnnl.CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
    (top, bottom), (left, right) = pads
    cnnl.setPooling2dDescriptor_v2(pool, mode, cnnl.CNNL_PROPAGATE_NAN, kernel[0], kernel[1], top, bottom, left,
                                   right, strides[0], strides[1], dilations[0], dilations[1],
                                   bool(step.attrs.get("ceil_mode", 0)))

    def call(handle, inputs, outputs, workspace):
        cnnl.poolingForward(handle, pool, None, xd, inputs[0], None, yd, outputs[0], None, 0)

    layer = LibraryLayer(call, 0, (xd, yd))
    destroy = layer.destroy

    def destroy_all():
        destroy()
        cnnl.destroyPoolingDescriptor(pool)
    layer.destroy = destroy_all
    return layer


def _softmax(step, ins, outs) -> LibraryLayer:
    x = ins[0]
    rank = len(x.shape)
    axis = axis_of(step.attrs.get("axis", -1), max(rank, 1), step.name) if rank else 0
    outer = int(np.prod(x.shape[:axis], dtype=np.int64))
    inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
    extent = x.shape[axis] if rank else 1
    dims = [outer, extent, inner]
    xd, yd = tensor(cnnl.CNNL_LAYOUT_ARRAY, x.dtype, dims, step.name), \
        tensor(cnnl.CNNL_LAYOUT_ARRAY, outs[0].dtype, dims, step.name)
    algorithm = cnnl.CNNL_SOFTMAX_LOG if step.attrs.get("log") else cnnl.CNNL_SOFTMAX_ACCURATE

    def call(handle, inputs, outputs, workspace):
        cnnl.softmaxForward_v2(handle, algorithm, cnnl.CNNL_SOFTMAX_MODE_MEDIUM_DIMENSION,
                               cnnl.CNNL_COMPUTATION_HIGH_PRECISION, None, xd, inputs[0], None, yd, outputs[0])

    return LibraryLayer(call, 0, (xd, yd))


def _layer_norm(step, ins, outs) -> LibraryLayer:
    x = ins[0]
    axis = axis_of(step.attrs.get("axis", -1), len(x.shape), step.name)
    xd = tensor(cnnl.CNNL_LAYOUT_ARRAY, x.dtype, x.shape, step.name)
    yd = tensor(cnnl.CNNL_LAYOUT_ARRAY, outs[0].dtype, x.shape, step.name)
    inner = [int(np.prod(x.shape[axis:], dtype=np.int64))]
    wbd = tensor(cnnl.CNNL_LAYOUT_ARRAY, ins[1].dtype, inner, step.name) if len(ins) > 1 else None
    eps = float(step.attrs.get("epsilon", 1e-5))
    descriptors = [d for d in (xd, yd, wbd) if d is not None]

    def call(handle, inputs, outputs, workspace):
        weight = inputs[1] if len(inputs) > 1 else None
        bias = inputs[2] if len(inputs) > 2 else None
        cnnl.layerNormForward(handle, xd, inputs[0], axis, wbd, weight, bias, eps, None, 0, yd, outputs[0], None,
                              None, None)

    return LibraryLayer(call, 0, descriptors)


def _resize(step, ins, outs) -> LibraryLayer:
    x, y = ins[0], outs[0]
    layout = step.attrs.get("layout", "NCHW")
    rank = len(x.shape)
    mode, coordinate, rounding, cubic, exclude, scales = resize_rule(step.attrs, rank, step.name)
    if mode == "nearest":
        mode = cnnl.CNNL_INTERP_NEAREST
    elif mode == "cubic":
        mode = cnnl.CNNL_INTERP_BICUBIC
    else:
        mode = {3: cnnl.CNNL_INTERP_LINEAR, 4: cnnl.CNNL_INTERP_BILINEAR, 5: cnnl.CNNL_INTERP_TRILINEAR}[rank]
    coordinate = getattr(cnnl, f"CNNL_INTERP_COORDINATE_TRANSFORMATION_{coordinate}")
    rounding = getattr(cnnl, f"CNNL_INTERP_{rounding}")
    if layout == "NCHW":
        cnnl_layout = cnnl.CNNL_LAYOUT_ARRAY if rank == 3 else {4: cnnl.CNNL_LAYOUT_NCHW,
                                                                5: cnnl.CNNL_LAYOUT_NCDHW}[rank]
    else:
        cnnl_layout = {3: cnnl.CNNL_LAYOUT_NLC, 4: cnnl.CNNL_LAYOUT_NHWC, 5: cnnl.CNNL_LAYOUT_NDHWC}[rank]
    xd, yd = tensor(cnnl_layout, x.dtype, x.shape, step.name), tensor(cnnl_layout, y.dtype, y.shape, step.name)
    interp = cnnl.createInterpDescriptor()
    cnnl.setInterpDescriptor(interp, mode, coordinate)
    cnnl.setInterpDescriptorEx(interp, xd, rounding, scales, None, cubic, exclude)

    def call(handle, inputs, outputs, workspace):
        cnnl.interp_v3(handle, interp, xd, inputs[0], yd, outputs[0])

    layer = LibraryLayer(call, 0, (xd, yd))
    destroy = layer.destroy

    def destroy_all():
        destroy()
        cnnl.destroyInterpDescriptor(interp)
    layer.destroy = destroy_all
    return layer


#: op name -> the function that prepares its layer from (step, input infos, output infos)
PREPARE = {"pool": _pool, "softmax": _softmax, "layer_norm": _layer_norm, "resize": _resize}


def prepare(step, ins, outs) -> LibraryLayer:
    """The cnnl layer of a step for these input and output infos (MagicMindError when CNNL refuses it)."""
    try:
        return PREPARE[step.op](step, ins, outs)
    except cnnl.CnnlError as error:
        raise MagicMindError(Code.UNIMPLEMENTED, f"node {step.name!r} ({step.op}): {error}") from None
