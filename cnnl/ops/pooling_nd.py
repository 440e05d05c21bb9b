"""N-dimensional pooling descriptors: cnnlSetPoolingNdDescriptor_v2 (what DIOPI calls for 3-D max pooling). The
pooling ops of `cnnl.ops.pooling` (cnnlPoolingForward(_v2), cnnlPoolingForwardWithIndex, cnnlPoolingBackward and
their workspace queries) take 5-D NDHWC / NCDHW tensors with a 3-D descriptor; the numerics are those of 2-D pooling
with a depth axis (`cnnl.kernels.pool3d`), max indices being d * H * W + h * W + w.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int_sequence

from .. import checks
from .. import enums as E
from ..descriptors import live
from ..status import api
from .pooling import PoolingDescriptor


def _pads(padding, spatial):
    """(before, after) per axis from `spatial` symmetric values or 2 * spatial (before, after) values."""
    if isinstance(padding, (str, bytes)) or not hasattr(padding, "__len__"):
        raise ArgumentFault(f"expected a sequence of paddings, got {type(padding).__name__}", "padding")
    if len(padding) == spatial:
        values = as_int_sequence(padding, "padding", minimum=0)
        return tuple((v, v) for v in values)
    values = as_int_sequence(padding, "padding", length=2 * spatial, minimum=0)
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(spatial))


@api("cnnlSetPoolingNdDescriptor_v2")
def setPoolingNdDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, nbDims, window, padding, stride, dilation,
                              ceil_mode) -> None:
    """cnnlSetPoolingNdDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, nbDims, window[], padding[], stride[],
    dilation[], ceil_mode): pooling of nbDims-dimensional tensors (4 or 5): window, stride and dilation hold
    nbDims - 2 values, padding nbDims - 2 (the same before and after, as DIOPI passes them) or 2 * (nbDims - 2)
    (before, after) values."""
    target = live(pooling_desc, PoolingDescriptor, "pooling_desc")
    rank = as_enum(nbDims, "nbDims", (4, 5), "pooling rank (4 or 5)")
    spatial = rank - 2
    values = dict(mode=as_enum(mode, "mode", E.POOLING_MODES, "cnnlPoolingMode_t"),
                  propagate_nan=as_enum(maxpooling_nan_opt, "maxpooling_nan_opt", E.NAN_PROPAGATIONS,
                                        "cnnlNanPropagation_t") == E.CNNL_PROPAGATE_NAN,
                  kernel=as_int_sequence(window, "window", length=spatial, minimum=1),
                  pads=_pads(padding, spatial),
                  strides=as_int_sequence(stride, "stride", length=spatial, minimum=1),
                  dilations=as_int_sequence(dilation, "dilation", length=spatial, minimum=1),
                  ceil_mode=checks.flag(ceil_mode, "ceil_mode"))
    for axis, ((before, after), k, d) in enumerate(zip(values["pads"], values["kernel"], values["dilations"])):
        extent = (k - 1) * d + 1
        if 2 * max(before, after) > extent:
            raise ArgumentFault(f"padding {max(before, after)} of axis {axis} exceeds half the window extent {extent}",
                                "padding")
    for name, value in values.items():
        setattr(target, name, value)
    target.is_set = True
