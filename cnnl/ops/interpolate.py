"""Interpolation: the interp descriptor (cnnlCreate/Destroy/SetInterpDescriptor, cnnlSetInterpDescriptorEx),
cnnlInterp_v3 and cnnlInterpBackward_v2 - the upsampling ops of PyTorch (nearest, nearest-exact, linear, bilinear,
bicubic, trilinear; align_corners; scale factors).

Tensors are (N, *spatial, C) in a channel-last layout (NLC, NHWC, NDHWC: what DIOPI passes) or channel-first
(NCHW, NCDHW, and ARRAY read as N, C, *spatial like PyTorch); input and output share layout, batch, channels and
data type (HALF, BFLOAT16, FLOAT, DOUBLE). Modes by rank: NEAREST 3-5 dims, LINEAR 3, BILINEAR and BICUBIC 4,
TRILINEAR 5. Coordinate transformations (chosen numbering, PyTorch/ONNX rules, see `cnnl.kernels.interpolate`):
ALGO0 half pixel (PyTorch align_corners=False), ALGO1 PyTorch half pixel, ALGO2 align corners, ALGO3 asymmetric
(PyTorch nearest), ALGO4 and ALGO7 nearest-exact (nearest only); ALGO5/ALGO6 are NOT_SUPPORTED. The backward
derives its rule from (align_corners, align_center) as torch_mlu does: (False, True) half pixel, (True, False)
align corners, (False, False) asymmetric.
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_number

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..kernels import interpolate as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_CHANNEL_LAST = {3: E.CNNL_LAYOUT_NLC, 4: E.CNNL_LAYOUT_NHWC, 5: E.CNNL_LAYOUT_NDHWC}
_CHANNEL_FIRST = {3: (E.CNNL_LAYOUT_ARRAY,), 4: (E.CNNL_LAYOUT_NCHW, E.CNNL_LAYOUT_ARRAY),
                  5: (E.CNNL_LAYOUT_NCDHW, E.CNNL_LAYOUT_ARRAY)}
#: mode -> (kernel kind, ranks it takes)
_MODES = {E.CNNL_INTERP_NEAREST: (K.NEAREST, (3, 4, 5)), E.CNNL_INTERP_LINEAR: (K.LINEAR, (3,)),
          E.CNNL_INTERP_BILINEAR: (K.LINEAR, (4,)), E.CNNL_INTERP_BICUBIC: (K.CUBIC, (4,)),
          E.CNNL_INTERP_TRILINEAR: (K.LINEAR, (5,))}
_COORDINATES = {E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO0: K.HALF_PIXEL,
                E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO1: K.PYTORCH_HALF_PIXEL,
                E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO2: K.ALIGN_CORNERS,
                E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO3: K.ASYMMETRIC,
                E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO4: K.HALF_PIXEL_NEAREST,
                E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO7: K.HALF_PIXEL_NEAREST}
_NEAREST_ONLY = (K.HALF_PIXEL_NEAREST,)
_ROUNDING = {E.CNNL_INTERP_FLOOR: K.FLOOR, E.CNNL_INTERP_CEIL: K.CEIL, E.CNNL_INTERP_ROUND_PERFER_FLOOR:
             K.ROUND_HALF_DOWN, E.CNNL_INTERP_ROUND_PERFER_CEIL: K.ROUND_HALF_UP}
#: cost per output element and tap
_FLOPS_PER_TAP = 2


class InterpDescriptor(Descriptor):
    """cnnlInterpDescriptor_t: mode, coordinate transformation, nearest rounding, scale factors, cubic coefficient."""

    c_type = "cnnlInterpDescriptor_t"
    setter = "cnnlSetInterpDescriptor"

    def __init__(self):
        super().__init__()
        self.mode = E.CNNL_INTERP_NEAREST
        self.coordinate = E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO3
        self.rounding = E.CNNL_INTERP_FLOOR
        self.scales = None
        self.cubic_a = -0.75
        self.exclude_outside = False


createInterpDescriptor, destroyInterpDescriptor = lifecycle(InterpDescriptor, "cnnlCreateInterpDescriptor",
                                                            "cnnlDestroyInterpDescriptor")


@api("cnnlSetInterpDescriptor")
def setInterpDescriptor(desc, mode, coordinate_trans_mode) -> None:
    """cnnlSetInterpDescriptor(desc, cnnlInterpMode_t mode, cnnlInterpCoordinateTransformationMode_t
    coordinate_trans_mode)."""
    target = live(desc, InterpDescriptor, "desc")
    target.mode = as_enum(mode, "mode", E.INTERP_MODES, "cnnlInterpMode_t")
    target.coordinate = as_enum(coordinate_trans_mode, "coordinate_trans_mode", E.INTERP_COORDINATE_MODES,
                                "cnnlInterpCoordinateTransformationMode_t")
    target.is_set = True


def _scales(values, count: int, arg: str):
    """None, or `count` positive finite scale factors."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ArgumentFault(f"expected a sequence of scale factors, got {type(values).__name__}", arg)
    if len(values) != count:
        raise ArgumentFault(f"{len(values)} scale factors for {count} spatial axes", arg)
    factors = tuple(float(as_number(v, f"{arg}[{i}]")) for i, v in enumerate(values))
    for i, factor in enumerate(factors):
        if not (math.isfinite(factor) and factor > 0):
            raise ArgumentFault(f"scale factor {factor} is not positive and finite", f"{arg}[{i}]")
    return factors


@api("cnnlSetInterpDescriptorEx")
def setInterpDescriptorEx(desc, input_desc, round_mode, scales, pad, cubic_coeff, exclude_outside) -> None:
    """cnnlSetInterpDescriptorEx(desc, input_desc, cnnlInterpRoundMode_t round_mode, const float scales[],
    const float pad[], float cubic_coeff, bool exclude_outside): the nearest rounding, optional scale factors (one
    per spatial axis of input_desc, NULL = from the sizes), the cubic coefficient A. `pad` must be NULL."""
    target = live(desc, InterpDescriptor, "desc")
    x = tensor_arg(input_desc, "input_desc")
    if not 3 <= len(x.dims) <= 5:
        raise ArgumentFault(f"{len(x.dims)} dims; interpolation takes 3 to 5", "input_desc")
    rounding = as_enum(round_mode, "round_mode", E.INTERP_ROUND_MODES, "cnnlInterpRoundMode_t")
    factors = _scales(scales, len(x.dims) - 2, "scales")
    if pad is not None:
        raise NotSupportedFault("padding before interpolation is not supported (pass NULL)", "pad")
    coefficient = float(as_number(cubic_coeff, "cubic_coeff"))
    if not math.isfinite(coefficient):
        raise ArgumentFault(f"cubic coefficient {coefficient} is not finite", "cubic_coeff")
    target.rounding, target.scales, target.cubic_a = rounding, factors, coefficient
    target.exclude_outside = checks.flag(exclude_outside, "exclude_outside")


def _feature(desc: TensorDescriptor, arg: str, op: str) -> TensorDescriptor:
    N.float_tensor(desc, arg, op)
    rank = len(desc.dims)
    if rank not in _CHANNEL_LAST:
        raise ArgumentFault(f"{rank} dims; interpolation takes 3 to 5", arg)
    if desc.layout != _CHANNEL_LAST[rank] and desc.layout not in _CHANNEL_FIRST[rank]:
        raise ArgumentFault(f"layout {desc.layout} is not a {rank}-D feature-map layout", arg)
    return desc


def _channel_last(view, desc: TensorDescriptor):
    if desc.layout == _CHANNEL_LAST[len(desc.dims)]:
        return view
    return view.transpose((0,) + tuple(range(2, view.ndim)) + (1,))


def _pair(op, x_desc, x_arg, y_desc, y_arg):
    x, y = _feature(tensor_arg(x_desc, x_arg), x_arg, op), _feature(tensor_arg(y_desc, y_arg), y_arg, op)
    checks.same_dtype(x, x_arg, (y, y_arg))
    if len(y.dims) != len(x.dims) or y.layout != x.layout:
        raise ArgumentFault(f"layout {y.layout} with {len(y.dims)} dims differs from {x_arg}'s", y_arg)
    channel_last = x.layout == _CHANNEL_LAST[len(x.dims)]
    keep = (0, len(x.dims) - 1) if channel_last else (0, 1)
    for axis in keep:
        if x.dims[axis] != y.dims[axis]:
            raise ArgumentFault(f"dims {list(y.dims)}: batch and channels must equal {x_arg}'s {list(x.dims)}",
                                y_arg)
    return x, y


def _rule(op, mode: int, coordinate: int, rank: int, arg: str):
    kind, ranks = _MODES[mode]
    if rank not in ranks:
        raise ArgumentFault(f"mode {mode} takes tensors of {' or '.join(map(str, ranks))} dims, not {rank}", arg)
    if coordinate not in _COORDINATES:
        raise NotSupportedFault(f"coordinate transformation ALGO{coordinate} is not supported", "desc")
    rule = _COORDINATES[coordinate]
    if rule in _NEAREST_ONLY and kind != K.NEAREST:
        raise NotSupportedFault(f"coordinate transformation ALGO{coordinate} applies to nearest only", "desc")
    return kind, rule


def _flops(y: TensorDescriptor, kind: str) -> float:
    taps = {K.NEAREST: 1, K.LINEAR: 2, K.CUBIC: 4}[kind] ** (len(y.dims) - 2)
    return _FLOPS_PER_TAP * taps * y.size


@api("cnnlInterp_v3")
def interp_v3(handle, desc, input_desc, input, output_desc, output) -> None:  # noqa: A002
    """cnnlInterp_v3(handle, desc, input_desc, input, output_desc, output): resize the spatial axes of input to
    output's extents by the descriptor's mode and rules."""
    op = "cnnlInterp_v3"
    with OpCall(op, handle) as call:
        interp = ready(desc, InterpDescriptor, "desc")
        x, y = _pair(op, input_desc, "input_desc", output_desc, "output_desc")
        kind, rule = _rule(op, interp.mode, interp.coordinate, len(x.dims), "input_desc")
        if interp.scales is not None and len(interp.scales) != len(x.dims) - 2:
            raise ArgumentFault(f"{len(interp.scales)} scale factors for {len(x.dims) - 2} spatial axes "
                                f"(cnnlSetInterpDescriptorEx)", "desc")
        spec = K.Interp(kind, rule, _ROUNDING[interp.rounding], interp.cubic_a, interp.exclude_outside)
        scales = interp.scales
        xv = _channel_last(call.input(x, input, "input"), x)
        yv = _channel_last(call.output(y, output, "output"), y)
        call.submit(lambda: K.interpolate(xv, yv, spec, scales), flops=_flops(y, kind), dtype=x.dtype)


#: (align_corners, align_center) -> (coordinate rule, nearest rounding), as torch_mlu maps them
_BACKWARD_RULES = {(False, True): (K.HALF_PIXEL, K.CEIL), (True, False): (K.ALIGN_CORNERS, K.ROUND_HALF_UP),
                   (False, False): (K.ASYMMETRIC, K.FLOOR)}


@api("cnnlInterpBackward_v2")
def interpBackward_v2(handle, align_corners, align_center, mode, scales, use_sizes, grad_output_desc, grad_output,
                      grad_input_desc, grad_input) -> None:
    """cnnlInterpBackward_v2(handle, bool align_corners, bool align_center, cnnlInterpBackwardMode_t mode,
    const float scales[], bool use_sizes, grad_output_desc, grad_output, grad_input_desc, grad_input): the
    gradient of the interpolation. With `use_sizes` (DIOPI and torch_mlu pass true, with NULL scales) the ratios
    come from the tensor extents; otherwise `scales` holds one scale factor per spatial axis. (The names of the
    fifth and sixth arguments are chosen: CNNL's are not public.)"""
    op = "cnnlInterpBackward_v2"
    with OpCall(op, handle) as call:
        dy, dx = _pair(op, grad_output_desc, "grad_output_desc", grad_input_desc, "grad_input_desc")
        corners, center = checks.flag(align_corners, "align_corners"), checks.flag(align_center, "align_center")
        if (corners, center) not in _BACKWARD_RULES:
            raise ArgumentFault("align_corners and align_center cannot both be true", "align_center")
        rule, rounding = _BACKWARD_RULES[(corners, center)]
        mode = as_enum(mode, "mode", E.INTERP_BACKWARD_MODES, "cnnlInterpBackwardMode_t")
        kind, _ = _rule(op, mode, E.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO0, len(dy.dims), "grad_output_desc")
        factors = None if checks.flag(use_sizes, "use_sizes") else _scales(scales, len(dy.dims) - 2, "scales")
        if factors is None and not checks.flag(use_sizes, "use_sizes"):
            raise ArgumentFault("scales is NULL but use_sizes is false", "scales")
        spec = K.Interp(kind, rule, rounding)
        dyv = _channel_last(call.input(dy, grad_output, "grad_output"), dy)
        dxv = _channel_last(call.output(dx, grad_input, "grad_input"), dx)
        call.submit(lambda: K.interpolate_backward(dyv, dxv, spec, factors), flops=_flops(dy, kind),
                    dtype=dy.dtype)
