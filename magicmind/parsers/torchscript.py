"""The PyTorch parser: a TorchScript file (`torch.jit.trace` + `torch.jit.save`) into a Network.

The module is loaded with torch.jit.load and translated by torch's own TorchScript-based ONNX exporter (the
graph's aten ops -> ONNX, torch's mapping, kept up to date by torch), then read by the ONNX parser: one op reader,
every op the ONNX parser knows. The inputs take their types from `pytorch-input-dtypes` (one DataType per input;
the traced types otherwise) and their rank from the traced graph; every axis is left mutable (-1), as a PyTorch
file carries no shapes: set them with `get_input(i).set_dimension(...)` or a dim_range, as the samples do. The
inputs are named as the traced function's arguments; the outputs output0, output1, ...

A saved trace records no input sizes: the ranks are found by running the module on example inputs
(CANDIDATE_SHAPES; a first 2-D convolution's input channels first). A module that runs on none of them, or an op
torch's exporter cannot translate, is an error naming it.
"""
from __future__ import annotations

import io
import os
import re
import tempfile
import warnings

import numpy as np

from ..dtypes import get_datatype_by_numpy, numpy_of
from ..graph.network import Network
from ..status import Code, MagicMindError
from . import onnx_parser

OPSET = 17
_TORCH_TYPES = {"Float": np.float32, "Half": np.float16, "Double": np.float64, "Int": np.int32, "Long": np.int64,
                "Bool": np.bool_, "Byte": np.uint8, "Char": np.int8, "Short": np.int16}


#: example shapes tried, in order, when the file records no sizes (a saved trace keeps none): an image, token ids,
#: a sequence of features, a vector, a volume; every input takes the same form. Only the rank matters to the
#: translation (every axis is left mutable); the first form the module runs on is taken.
CANDIDATE_SHAPES = ((1, 3, 64, 64), (1, 16), (1, 16, 16), (16,), (1, 3, 16, 16, 16), (1, 1, 64, 64))


def _dtype(value, dtype):
    if dtype is not None:
        return dtype
    tensor_type = value.type()
    scalar = tensor_type.scalarType() if hasattr(tensor_type, "scalarType") else None
    return np.dtype(_TORCH_TYPES.get(scalar, np.float32))


def _recorded(value):
    tensor_type = value.type()
    sizes = tensor_type.sizes() if hasattr(tensor_type, "sizes") else None
    return None if sizes is None else tuple(max(int(s), 1) for s in sizes)


def _image_channels(module):
    """The input channels of the first 2-D convolution of the module (the image's), or None."""
    for sub in module.modules():
        if getattr(sub, "original_name", "") == "Conv2d" and hasattr(sub, "weight"):
            return int(sub.weight.shape[1])
    return None


def _examples(torch, module, values, dtypes, given=None) -> tuple:
    """Example inputs the module runs on: `given` shapes, the recorded sizes, else the first of CANDIDATE_SHAPES
    that runs; (None, failures) when none does."""
    types = [_dtype(v, d) for v, d in zip(values, dtypes)]
    recorded = [_recorded(v) for v in values]
    if given is not None:
        candidates = [given]
    elif all(r is not None for r in recorded):
        candidates = [recorded]
    else:
        channels = _image_channels(module)
        shapes = list(CANDIDATE_SHAPES)
        if channels:
            shapes.insert(0, (1, channels, 64, 64))
        candidates = [[r if r is not None else shape for r in recorded] for shape in shapes]
    failures = []
    for shapes in candidates:
        examples = tuple(torch.from_numpy(np.ones(shape, t) if t.kind == "f" else np.zeros(shape, t))
                         for shape, t in zip(shapes, types))
        try:
            with torch.no_grad():
                outputs = module(*examples)
        except Exception as error:  # noqa: BLE001 - the wrong rank: try the next
            failures.append(f"{[list(s) for s in shapes]}: {str(error).splitlines()[0][:120]}")
            continue
        return examples, outputs
    return None, failures


def _name(value, index: int) -> str:
    name = re.sub(r"\.\d+$", "", value.debugName())
    return name if name and not name[0].isdigit() else f"input{index}"


def parse(network: Network, path: str, params: dict) -> None:
    """Read the TorchScript file at `path` into `network`."""
    import torch
    try:
        module = torch.jit.load(path, map_location="cpu")
    except Exception as error:  # noqa: BLE001  (torch raises RuntimeError and others)
        raise MagicMindError(Code.INVALID_ARGUMENT, f"pytorch: {path!r} is not a TorchScript file ({error})") \
            from None
    module.eval()
    values = list(module.graph.inputs())[1:]  # the first is the module itself
    dtypes = params.get("pytorch-input-dtypes")
    if dtypes is not None and len(dtypes) != len(values):
        raise MagicMindError(Code.INVALID_ARGUMENT, f"pytorch-input-dtypes gives {len(dtypes)} types; the model "
                                                    f"takes {len(values)} inputs")
    dtypes = [numpy_of(d, "pytorch-input-dtypes") for d in dtypes] if dtypes else [None] * len(values)
    names = []
    for i, v in enumerate(values):
        name = _name(v, i)
        names.append(name if name not in names else f"input{i}")
    examples, outputs = _examples(torch, module, values, dtypes)
    if examples is not None:
        _translate(torch, module, network, names, examples, outputs)
        return
    # the ranks are unknown until the program sets the inputs' dims: the inputs now, the graph then
    tensors = []
    for name, value, dtype in zip(names, values, dtypes):
        tensor = network.add_input(get_datatype_by_numpy(_dtype(value, dtype)), None)
        tensor.set_tensor_name(name)
        tensors.append(tensor)

    def complete():
        shapes = [tuple(d if d > 0 else 1 for d in t.get_dimension().GetDims()) for t in tensors]
        found, failures = _examples(torch, module, values, dtypes, shapes)  # (examples, outputs) when it runs
        if found is None:
            raise MagicMindError(Code.INVALID_ARGUMENT, f"pytorch: the module does not run on inputs of dims "
                                                        f"{[list(s) for s in shapes]}: {'; '.join(failures)}")
        _translate(torch, module, network, names, found, None, dict(zip(names, tensors)))
    network.defer(tensors, complete, "the PyTorch model's graph is read once every input has its dims "
                                     "(set_dimension): its inputs' ranks are not in the file and no example ran")


def _translate(torch, module, network, names, examples, outputs, bound=None) -> None:
    """Export the module through torch's ONNX exporter and read that graph into the network."""
    if outputs is None:
        with torch.no_grad():
            outputs = module(*examples)
    count = len(outputs) if isinstance(outputs, (tuple, list)) else 1
    output_names = [f"output{i}" for i in range(count)]
    dynamic = {name: list(range(example.dim())) for name, example in zip(names, examples)}
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.onnx.export(module, examples, buffer, input_names=names, output_names=output_names,
                              dynamic_axes=dynamic, opset_version=OPSET, dynamo=False)
        except Exception as error:  # noqa: BLE001  (the exporter's errors name the aten op)
            raise MagicMindError(Code.UNIMPLEMENTED, f"pytorch: the model cannot be translated: {error}") from None
    handle, temporary = tempfile.mkstemp(suffix=".onnx")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(buffer.getvalue())
        onnx_parser.parse(network, temporary, {}, bound)
    finally:
        os.unlink(temporary)
