"""`import magicmind.python.runtime as mm`: MagicMind's Python API on the simulated MLU.

Build: Network, Parser, BuilderConfig, Builder -> Model; run: System, Device, Model.EngineConfig, Engine, Context,
IRTTensor; Profiler. See docs/magicmind.md.
"""
from ...build.builder import Builder  # noqa: F401
from ...build.calibration import CalibDataInterface, Calibrator, RemoteConfig  # noqa: F401
from ...build.config import BuilderConfig  # noqa: F401
from ...dims import Dims  # noqa: F401
from ...enums import (DataType, DeviceTracerLevel, HostTracerLevel, IActivation, IDetectionOutputAlgo,  # noqa: F401
                      IElementwise, ILogic, INmsType, IPaddingMode, IPoolingMode, IReduce, IResizeMode, Layout,
                      ModelKind, QuantizationAlgorithm, TensorLocation)
from ...graph.network import Network  # noqa: F401
from ...graph.tensor import INode, ITensor  # noqa: F401
from ...model.model import Model  # noqa: F401
from ...runtime.context import Context, ContextDumpInfo  # noqa: F401
from ...runtime.engine import Engine, EngineConfig  # noqa: F401
from ...runtime.profiler import Profiler, ProfilerOptions  # noqa: F401
from ...runtime.system import Device, Queue, System  # noqa: F401
from ...runtime.tensor import IRTTensor  # noqa: F401
from ...status import Code, MagicMindError, Status  # noqa: F401
from ... import enums  # noqa: F401
from . import model, parser  # noqa: F401
from .parser import Parser  # noqa: F401

IEngine, IContext, IModel, INetwork, IBuilder, IBuilderConfig = Engine, Context, Model, Network, Builder, BuilderConfig
