"""magicmind.python.cc._pywrap_runtime.enums: the enum types."""
from ....enums import (DataType, DeviceTracerLevel, HostTracerLevel, IActivation, IDetectionOutputAlgo,  # noqa: F401
                       IElementwise, ILogic, INmsType, IPaddingMode, IPoolingMode, IReduce, IResizeMode, Layout,
                       ModelKind, QuantizationAlgorithm, TensorLocation)
from ....status import Code  # noqa: F401
