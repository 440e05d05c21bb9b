"""MagicMind's enum types (Python `mm.DataType`, `mm.ModelKind`, ... and `mm.enums.X`).

Only the member names are public (docs/magicmind.md, section "Enums"); the values here are this clone's own, kept
stable because serialized models store them.
"""
from __future__ import annotations

import enum


class _Enum(enum.Enum):
    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    __str__ = __repr__


class DataType(_Enum):
    """magicmind::DataType."""

    INVALID = 0
    FLOAT32 = 1
    FLOAT16 = 2
    INT8 = 3
    INT16 = 4
    INT32 = 5
    INT64 = 6
    UINT8 = 7
    UINT16 = 8
    UINT32 = 9
    UINT64 = 10
    BOOL = 11
    QINT8 = 12
    QINT16 = 13
    FLOAT64 = 14
    BFLOAT16 = 15
    TENSORLIST = 16


class ModelKind(_Enum):
    """magicmind::ModelKind: the framework a Parser reads."""

    kOnnx = 0
    kPytorch = 1
    kCaffe = 2
    kTensorflow = 3


class QuantizationAlgorithm(_Enum):
    """magicmind::QuantizationAlgorithm."""

    INVALID = 0
    LINEAR_ALGORITHM = 1
    EQNM_ALGORITHM = 2


class Layout(_Enum):
    """magicmind::Layout."""

    NONE = 0
    NCHW = 1
    NHWC = 2
    NCT = 3
    NTC = 4
    NCDHW = 5
    NDHWC = 6
    HWCN = 7
    ARRAY = 8


class IDetectionOutputAlgo(_Enum):
    """The box decoding of add_i_detection_output_node."""

    YOLOV3 = 0
    YOLOV4 = 1
    YOLOV5 = 2


class INmsType(_Enum):
    """The suppression rule of add_i_detection_output_node."""

    NMS = 0
    DIOU_NMS = 1


class ILogic(_Enum):
    """add_i_logic_node's comparison or boolean function."""

    EQ = 0
    NE = 1
    GT = 2
    GE = 3
    LT = 4
    LE = 5
    AND = 6
    OR = 7
    XOR = 8
    NOT = 9


class IReduce(_Enum):
    """add_i_reduce_node's reduction."""

    ADD = 0
    MUL = 1
    MAX = 2
    MIN = 3
    MEAN = 4
    AND = 5
    OR = 6
    NORM1 = 7
    NORM2 = 8
    SUMSQ = 9


class IActivation(_Enum):
    """add_i_activation_node's function."""

    RELU = 0
    RELU6 = 1
    SIGMOID = 2
    TANH = 3
    GELU = 4
    ELU = 5
    LEAKYRELU = 6
    SILU = 7
    HARDSIGMOID = 8
    HARDSWISH = 9
    SOFTPLUS = 10
    MISH = 11
    ABS = 12


class IElementwise(_Enum):
    """add_i_elementwise_node's function."""

    ADD = 0
    SUB = 1
    MUL = 2
    DIV = 3
    MAX = 4
    MIN = 5
    POW = 6
    SQUARED_DIFF = 7


class IPaddingMode(_Enum):
    """Convolution and pooling padding: EXPLICIT pads as set, SAME pads to ceil(in / stride), VALID pads nothing."""

    EXPLICIT = 0
    SAME = 1
    VALID = 2


class IPoolingMode(_Enum):
    """add_i_pool2d_node's pooling."""

    MAX = 0
    AVERAGE_COUNT_INCLUDE_PADDING = 1
    AVERAGE_COUNT_EXCLUDE_PADDING = 2


class IResizeMode(_Enum):
    """add_i_resize_node's interpolation."""

    NEAREST = 0
    LINEAR = 1


class TensorLocation(_Enum):
    """Where an IRTTensor's data lives (C++ TensorLocation)."""

    kHost = 0
    kMLU = 1
    kRemoteHost = 2
    kRemoteMLU = 3


class HostTracerLevel(_Enum):
    kNone = 0
    kCritical = 1
    kInfo = 2
    kVerbose = 3


class DeviceTracerLevel(_Enum):
    kOff = 0
    kOn = 1


ALL = (DataType, ModelKind, QuantizationAlgorithm, Layout, IDetectionOutputAlgo, INmsType, ILogic, IReduce,
       IActivation, IElementwise, IPaddingMode, IPoolingMode, IResizeMode, TensorLocation, HostTracerLevel,
       DeviceTracerLevel)


def member(value, enum_type, arg: str):
    """`value` as a member of `enum_type` (a member, or its name); anything else is an INVALID_ARGUMENT naming arg."""
    from .status import invalid
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str) and value in enum_type.__members__:
        return enum_type[value]
    raise invalid(f"{arg}: {value!r} is not a {enum_type.__name__} (one of {', '.join(enum_type.__members__)})")
