"""Node types with setters (the C++ INode subclasses the samples configure after adding them)."""
from __future__ import annotations

import numbers

from ..enums import IDetectionOutputAlgo, INmsType, IPaddingMode, Layout, member
from ..status import MagicMindError
from .tensor import INode


def _ints(values, name: str, count=None, minimum=None) -> tuple:
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = (values,)
    try:
        result = tuple(values)
    except TypeError:
        raise MagicMindError(3, f"{name}: expected ints, got {values!r}") from None
    for v in result:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise MagicMindError(3, f"{name}: {v!r} is not an int")
        if minimum is not None and v < minimum:
            raise MagicMindError(3, f"{name}: {v} is below {minimum}")
    if count is not None and len(result) != count:
        raise MagicMindError(3, f"{name}: expected {count} values, got {len(result)}")
    return tuple(int(v) for v in result)


def _number(value, name: str, minimum=None, maximum=None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MagicMindError(3, f"{name}: {value!r} is not a number")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise MagicMindError(3, f"{name}: {value} is outside [{minimum}, {maximum}]")
    return float(value)


def _setter(build):
    def method(self, *args):
        try:
            attrs = build(self, *args)
        except MagicMindError as error:
            return error.status
        return self._set(**attrs)
    method.__doc__ = build.__doc__
    return method


class IConvNode(INode):
    """IConvNode: set_stride(h, w), set_pad(top, bottom, left, right), set_dilation(h, w), set_padding_mode,
    set_group."""

    @_setter
    def set_stride(self, h, w):
        return {"strides": _ints((h, w), "set_stride", 2, 1)}

    @_setter
    def set_pad(self, top, bottom, left, right):
        t, b, l, r = _ints((top, bottom, left, right), "set_pad", 4, 0)
        return {"pads": (t, l, b, r), "auto_pad": "NOTSET"}

    @_setter
    def set_dilation(self, h, w):
        return {"dilations": _ints((h, w), "set_dilation", 2, 1)}

    @_setter
    def set_padding_mode(self, mode):
        mode = member(mode, IPaddingMode, "set_padding_mode")
        return {"auto_pad": {"EXPLICIT": "NOTSET", "SAME": "SAME_UPPER", "VALID": "VALID"}[mode.name]}

    @_setter
    def set_group(self, group):
        return {"group": _ints(group, "set_group", 1, 1)[0]}


class IPoolNode(IConvNode):
    """IPool2DNode: set_kernel(h, w), set_stride, set_pad, set_padding_mode, set_ceil_mode."""

    @_setter
    def set_kernel(self, h, w):
        return {"kernel_shape": _ints((h, w), "set_kernel", 2, 1)}

    @_setter
    def set_ceil_mode(self, ceil):
        return {"ceil_mode": int(bool(ceil))}


class IMatMulNode(INode):
    """IMatMulNode: set_transpose_a(bool), set_transpose_b(bool)."""

    @_setter
    def set_transpose_a(self, value):
        return {"trans_a": bool(value)}

    @_setter
    def set_transpose_b(self, value):
        return {"trans_b": bool(value)}


class IEpsilonNode(INode):
    """Normalisation nodes: set_epsilon(eps), set_axis(axis)."""

    @_setter
    def set_epsilon(self, eps):
        return {"epsilon": _number(eps, "set_epsilon", 0.0)}

    @_setter
    def set_axis(self, axis):
        return {"axis": _ints(axis, "set_axis", 1)[0]}


class IDetectionOutputNode(INode):
    """IDetectionOutputNode: the YOLO head decoding and NMS (graph/ops/detection.py)."""

    @_setter
    def set_algo(self, algo):
        return {"algo": member(algo, IDetectionOutputAlgo, "set_algo").name}

    @_setter
    def set_confidence_thresh(self, value):
        return {"confidence_thresh": _number(value, "set_confidence_thresh", 0.0, 1.0)}

    @_setter
    def set_nms_thresh(self, value):
        return {"nms_thresh": _number(value, "set_nms_thresh", 0.0, 1.0)}

    @_setter
    def set_scale(self, value):
        return {"scale": _number(value, "set_scale", 0.0)}

    @_setter
    def set_num_coord(self, value):
        count = _ints(value, "set_num_coord", 1, 1)[0]
        if count != 4:
            raise MagicMindError(12, f"set_num_coord: {count} coordinates per box; only 4 are supported")
        return {"num_coord": count}

    @_setter
    def set_num_class(self, value):
        return {"num_class": _ints(value, "set_num_class", 1, 1)[0]}

    @_setter
    def set_num_entry(self, value):
        return {"num_entry": _ints(value, "set_num_entry", 1, 1)[0]}

    @_setter
    def set_num_anchor(self, value):
        return {"num_anchor": _ints(value, "set_num_anchor", 1, 1)[0]}

    @_setter
    def set_num_box_limit(self, value):
        return {"num_box_limit": _ints(value, "set_num_box_limit", 1, 1)[0]}

    @_setter
    def set_image_shape(self, h, w):
        return {"image_shape": _ints((h, w), "set_image_shape", 2, 1)}

    @_setter
    def set_layout(self, src, dst):
        member(src, Layout, "set_layout src")
        member(dst, Layout, "set_layout dst")
        return {}

    @_setter
    def set_aspect_ratios(self, ratios):
        return {"aspect_ratios": tuple(_number(r, "set_aspect_ratios", 0.0) for r in ratios)}

    @_setter
    def set_nms_type(self, value):
        return {"nms_type": member(value, INmsType, "set_nms_type").name}

    @_setter
    def set_diou_power_exp(self, value):
        return {"diou_power_exp": _number(value, "set_diou_power_exp", 0.0)}


