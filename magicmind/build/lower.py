"""Network -> Program: constants become values, every other node a step; shapes and dtypes from the network."""
from __future__ import annotations

from ..dtypes import numpy_of
from ..graph.network import Network
from ..graph.program import Program, Step
from ..status import Code, MagicMindError, invalid


def lower(network: Network) -> Program:
    """The Program of a network with its current input dims (raises MagicMindError for a network that does not
    infer or has no outputs)."""
    if not isinstance(network, Network):
        raise invalid(f"build_model: network must be a Network, not {type(network).__name__}")
    if network.pending_reason():
        raise MagicMindError(Code.FAILED_PRECONDITION, f"build_model: {network.pending_reason()}")
    if network.get_output_count() == 0:
        raise invalid("build_model: the network has no outputs (mark_output)")
    infos = network.infos()
    program = Program()
    keys = {}
    prefix = []
    for tensor in network.get_inputs():
        info = infos[tensor]
        if tensor._model_dtype is not None:  # set_data_type: the model takes another type, cast first
            given = program.new_value(tensor.get_tensor_name(), numpy_of(tensor._model_dtype), info.shape)
            keys[tensor] = program.new_value(tensor.get_tensor_name() + "/network_type", info.dtype, info.shape)
            prefix.append(Step("cast", {"dtype": info.dtype.name}, [given], [keys[tensor]],
                               tensor.get_tensor_name() + "/to_network_type"))
            program.inputs.append(given)
            continue
        keys[tensor] = program.new_value(tensor.get_tensor_name(), info.dtype, info.shape)
        program.inputs.append(keys[tensor])
    program.steps.extend(prefix)
    for node in network.nodes:
        if node.op == "const":
            tensor = node.outputs[0]
            value = node.attrs["value"]
            keys[tensor] = program.new_value(tensor.get_tensor_name(), value.dtype, value.shape, value)
            continue
        ins = [keys[t] for t in node.inputs]
        outs = []
        for tensor in node.outputs:
            info = infos[tensor]
            keys[tensor] = program.new_value(tensor.get_tensor_name(), info.dtype, info.shape)
            outs.append(keys[tensor])
        program.steps.append(Step(node.op, dict(node.attrs), ins, outs, node.get_node_name()))
    for tensor in network.get_outputs():
        program.outputs.append(keys[tensor])
    program.ranges = [None] * len(program.inputs)
    return program
