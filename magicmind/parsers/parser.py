"""magicmind::IParser (Python `Parser(ModelKind.kX)`): set_model_param, parse(network, path[, prototxt])."""
from __future__ import annotations

import importlib
import os

from ..enums import DataType, ModelKind, member
from ..graph.network import Network
from ..status import Code, MagicMindError, Status

#: kind -> (module of this package, the Python packages it needs)
_FRONT_ENDS = {ModelKind.kOnnx: ("onnx_parser", ("onnx",)), ModelKind.kPytorch: ("torchscript", ("torch", "onnx"))}
_PARAMS = {
    ModelKind.kPytorch: {"pytorch-input-dtypes"},
    ModelKind.kOnnx: set(),
    ModelKind.kCaffe: set(),
    ModelKind.kTensorflow: {"tf-model-type", "tf-graphdef-inputs", "tf-graphdef-outputs", "tf-infer-shape"},
}


class Parser:
    """Parser(ModelKind.kOnnx | kPytorch). Caffe and TensorFlow models are not read by this simulator: parse
    says so (UNIMPLEMENTED), never builds a wrong network."""

    def __init__(self, kind):
        self.kind = member(kind, ModelKind, "Parser kind")
        self.params: dict = {}

    def set_model_param(self, key, value) -> Status:
        """IParser::SetModelParam(key, value)."""
        allowed = _PARAMS[self.kind]
        if key not in allowed:
            return Status(Code.INVALID_ARGUMENT, f"set_model_param: {key!r} is not a parameter of the "
                                                 f"{self.kind.name} parser (known: {', '.join(sorted(allowed)) or 'none'})")
        if key == "pytorch-input-dtypes":
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, DataType) for v in value):
                return Status(Code.INVALID_ARGUMENT, "set_model_param: pytorch-input-dtypes must be a list of "
                                                     "DataType, one per input")
        self.params[key] = value
        return Status()

    def parse(self, network, model_path, prototxt=None) -> Status:
        """IParser::Parse(network, path): the model's graph added to `network` (its inputs and outputs too)."""
        if not isinstance(network, Network):
            return Status(Code.INVALID_ARGUMENT, f"parse: network must be a Network, not {type(network).__name__}")
        if self.kind not in _FRONT_ENDS:
            return Status(Code.UNIMPLEMENTED, f"parse: {self.kind.name} models are not supported by this simulator "
                                              f"(export the model to ONNX, or save it as TorchScript)")
        if not isinstance(model_path, (str, os.PathLike)):
            return Status(Code.INVALID_ARGUMENT, f"parse: model_path {model_path!r} is not a path")
        if not os.path.isfile(model_path):
            return Status(Code.NOT_FOUND, f"parse: model file {os.fspath(model_path)!r} does not exist")
        module, packages = _FRONT_ENDS[self.kind]
        for package in packages:
            try:
                importlib.import_module(package)
            except ImportError:
                return Status(Code.UNAVAILABLE, f"parse: the {self.kind.name} parser needs the Python package "
                                                f"{package!r} (pip install {package})")
        try:
            front_end = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as error:
            if error.name != f"{__package__}.{module}":
                raise
            return Status(Code.UNIMPLEMENTED, f"parse: the {self.kind.name} parser is not part of this build yet")
        try:
            front_end.parse(network, os.fspath(model_path), self.params)
        except MagicMindError as error:
            return error.status
        return Status()
