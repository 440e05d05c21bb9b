"""Shared helpers of the MagicMind tests: build a network, run a model once on a fresh queue."""
import numpy as np

import magicmind.python.runtime as mm
from magicmind.python.common.types import get_datatype_by_numpy


def build(network, config_json=None, name="test"):
    config = mm.BuilderConfig()
    for text in ([config_json] if isinstance(config_json, str) else (config_json or [])):
        assert config.parse_from_string(text).ok(), text
    model = mm.Builder().build_model(name, network, config)
    assert model is not None
    return model


def run(model, arrays, context=None, queue=None):
    """Outputs (numpy) of one enqueue of host arrays."""
    if context is None:
        context = model.create_i_engine().create_i_context()
    queue = queue or mm.Device().create_queue()
    inputs = context.create_inputs()
    for tensor, array in zip(inputs, arrays):
        assert tensor.from_numpy(array).ok()
    outputs = []
    status = context.enqueue(inputs, outputs, queue)
    assert status.ok(), status
    assert queue.sync().ok()
    return [o.asnumpy() for o in outputs]


def const(network, array):
    array = np.asarray(array)
    dtype = get_datatype_by_numpy(array.dtype)
    return network.add_i_const_node(dtype, mm.Dims(array.shape), array).get_output(0)
