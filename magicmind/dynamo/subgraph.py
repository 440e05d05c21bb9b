"""One MagicMind subgraph of a compiled torch graph: exported, built (cached on disk) and run on mlu tensors.

The subgraph is exported by torch's ONNX exporter with its weights as constants (parameters and buffers of the
model, frozen at their values when they were compiled, so the builder can fold batch norms into convolutions) and
read by the ONNX parser; the model is built for the concrete shapes of its inputs (one model per input shape, as
the builder's fixed-shape models are fastest; axes torch left symbolic are mutable in one model) and kept on disk under the hash of the exported graph and the build
options. A run binds the mlu tensors' memory to the context's inputs and to new output tensors and enqueues the
model on the current stream's queue, so it is ordered with the eager ops around it.

A frozen weight changed in place afterwards (an optimizer step, `load_state_dict`) changes its version counter: the
next call rebuilds with the new values, never computing with stale ones.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
import threading
import warnings

import numpy as np
import torch

import cnrt
from mlusim.host.jitcache import cache_root

from ..build.builder import Builder
from ..build.calibration import CalibDataInterface, Calibrator
from ..build.config import BuilderConfig
from ..dims import Dims
from ..dtypes import get_datatype_by_numpy, numpy_of
from ..enums import ModelKind
from ..graph.network import Network
from ..model.model import Model
from ..parsers.parser import Parser
from ..status import Code, MagicMindError, Status

OPSET = 17
CACHE_AREA = "magicmind_dynamo"


class _Frozen(torch.nn.Module):
    """The subgraph with its frozen inputs as buffers: the exporter writes them as initializers (constants)."""

    def __init__(self, graph_module, count: int, frozen: dict):
        super().__init__()
        self.graph_module = graph_module
        self.count = count
        self.names = {}
        for position, value in frozen.items():
            name = f"frozen{position}"
            self.register_buffer(name, value)
            self.names[position] = name

    def forward(self, *live):
        remaining = iter(live)
        args = [getattr(self, self.names[i]) if i in self.names else next(remaining) for i in range(self.count)]
        return self.graph_module(*args)


def export_onnx(graph_module, count: int, frozen: dict, live_examples: list, dynamic=None) -> tuple:
    """The subgraph as ONNX bytes (inputs input0.., outputs output0..; `dynamic`: live input index -> its axes
    exported as dynamic) and whether it returns a tuple."""
    module = _Frozen(graph_module, count, {i: v.detach().cpu() for i, v in frozen.items()}).eval()
    examples = tuple(t.detach().cpu() for t in live_examples)
    with torch.no_grad():
        result = module(*examples)
    as_tuple = isinstance(result, (tuple, list))
    outputs = len(result) if as_tuple else 1
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, examples, buffer, input_names=[f"input{i}" for i in range(len(examples))],
                          output_names=[f"output{i}" for i in range(outputs)], opset_version=OPSET,
                          dynamic_axes={f"input{i}": list(axes) for i, axes in (dynamic or {}).items()} or None,
                          do_constant_folding=True, dynamo=False)
    return buffer.getvalue(), as_tuple


class _ExampleData(CalibDataInterface):
    """Calibration data of one input: the values the subgraph saw when it was compiled, one batch."""

    def __init__(self, array: np.ndarray):
        super().__init__()
        self.array = array
        self.served = False

    def get_shape(self):
        return Dims(self.array.shape)

    def get_data_type(self):
        return get_datatype_by_numpy(self.array.dtype)

    def get_sample(self):
        return self.array

    def next(self):
        if self.served:
            return Status(Code.OUT_OF_RANGE, "one batch: the compile-time values")
        self.served = True
        return Status()

    def reset(self):
        self.served = False
        return Status()


def build_model(name: str, onnx_bytes: bytes, config_text: str, calibration: list) -> Model:
    """The MagicMind model of an exported subgraph: from the disk cache when this graph was built with these options
    before, else parsed, (calibrated,) built and written there."""
    digest = hashlib.sha256(onnx_bytes + config_text.encode())
    for array in calibration:
        digest.update(np.ascontiguousarray(array).tobytes())
    directory = cache_root(CACHE_AREA)
    path = directory / f"{digest.hexdigest()[:32]}.mm"
    if path.exists():
        model = Model()
        if model.deserialize_from_file(str(path)).ok():
            return model
    network = Network()
    handle, source = tempfile.mkstemp(suffix=".onnx")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(onnx_bytes)
        _check(Parser(ModelKind.kOnnx).parse(network, source), name, "parse")
    finally:
        os.unlink(source)
    config = BuilderConfig()
    _check(config.parse_from_string(config_text), name, "builder config")
    if calibration:
        _check(Calibrator([_ExampleData(a) for a in calibration]).calibrate(network, config), name, "calibrate")
    builder = Builder()
    model = builder.build_model(name, network, config)
    if model is None:
        raise MagicMindError(builder.last_status.code(), f"{name}: build: {builder.last_status}")
    directory.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    if model.serialize_to_file(str(temporary)).ok():
        os.replace(temporary, path)
    return model


def _check(status, name: str, what: str) -> None:
    if not status.ok():
        raise MagicMindError(status.code(), f"{name}: {what}: {status}")


def _torch_dtype(data_type):
    return torch.from_numpy(np.empty(0, numpy_of(data_type))).dtype


class BuiltSubgraph:
    """A built model of the subgraph for one set of input shapes, with a context per device it runs on."""

    def __init__(self, model: Model, as_tuple: bool, weights: list = ()):
        self.model = model
        #: (argument position, weak reference) of each weight the model was built from
        self.weights = list(weights)
        self.engine = model.create_i_engine()
        self.as_tuple = as_tuple
        self.contexts: dict = {}
        self._lock = threading.Lock()

    def context(self, device: int):
        found = self.contexts.get(device)
        if found is None:
            with self._lock:
                found = self.contexts.get(device)
                if found is None:
                    previous = cnrt.getDevice()
                    cnrt.setDevice(device)
                    try:
                        found = self.engine.create_i_context()
                    finally:
                        cnrt.setDevice(previous)
                    self.contexts[device] = found
        return found

    def run(self, name: str, live: list):
        """Enqueue the model on the current stream of the inputs' device; new mlu tensors hold the outputs, or None
        when an output is empty (the caller runs the subgraph eagerly)."""
        device = live[0].device
        context = self.context(device.index)
        inputs = context.create_inputs()
        dense = [t.contiguous() for t in live]
        for tensor, value in zip(inputs, dense):
            tensor.set_dimensions(Dims(tuple(value.shape)))
            _check(tensor.set_data(value.data_ptr()), name, "input")
        outputs = context.create_outputs(inputs)
        results = [torch.empty(tuple(t.get_dimensions().GetDims()), dtype=_torch_dtype(t.get_data_type()),
                               device=device) for t in outputs]
        if any(r.numel() == 0 for r in results):
            return None
        for tensor, result in zip(outputs, results):
            _check(tensor.set_data(result.data_ptr()), name, "output")
        _check(context.enqueue(inputs, outputs, torch.mlu.current_stream(device).mlu_stream), name, "enqueue")
        return tuple(results) if self.as_tuple else results[0]
