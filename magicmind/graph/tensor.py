"""ITensor: a tensor of a Network (an input, a node's output); INode: a node of a Network."""
from __future__ import annotations

from typing import Optional

from ..dims import Dims, dims_arg
from ..dtypes import get_datatype_by_numpy, numpy_of
from ..enums import DataType
from ..status import MagicMindError, Status, invalid


class ITensor:
    """magicmind::ITensor. Inputs carry their declared dims and type; every other tensor's come from the nodes."""

    def __init__(self, network, name: str, producer: Optional["INode"] = None, index: int = 0):
        self._network = network
        self._name = name
        self.producer = producer
        self.index = index
        self._dims: Optional[Dims] = None
        self._dtype: Optional[DataType] = None
        #: an input's type in the built model when set_data_type changed it (the network keeps `_dtype`)
        self._model_dtype: Optional[DataType] = None

    @property
    def is_input(self) -> bool:
        return self.producer is None

    def _info(self):
        return self._network.infos()[self]

    def get_tensor_name(self) -> str:
        """ITensor::GetTensorName()."""
        return self._name

    def set_tensor_name(self, name: str) -> Status:
        """ITensor::SetTensorName(name)."""
        if not isinstance(name, str) or not name:
            return Status(3, f"set_tensor_name: name must be a non-empty str, got {name!r}")
        self._name = name
        return Status()

    def get_dimension(self) -> Dims:
        """ITensor::GetDimension(): -1 on axes unknown until run time; Dims([-1]) ... for unknown rank none."""
        if self.is_input:
            return self._dims if self._dims is not None else Dims([])
        shape = self._info().shape
        return Dims(shape) if shape is not None else Dims([])

    def set_dimension(self, dims) -> Status:
        """ITensor::SetDimension(dims): for network inputs (the shape a parsed model runs with; -1 = mutable)."""
        if not self.is_input:
            return Status(3, f"set_dimension: tensor {self._name!r} is a node output; only inputs take dims")
        try:
            self._dims = dims_arg(dims, "dims")
        except MagicMindError as error:
            return error.status
        self._network.changed()
        try:
            self._network.complete_deferred()
        except MagicMindError as error:
            return error.status
        return Status()

    def get_data_type(self) -> DataType:
        """ITensor::GetDataType()."""
        if self.is_input:
            return self._model_dtype or self._dtype
        return get_datatype_by_numpy(self._info().dtype)

    def set_data_type(self, data_type) -> Status:
        """ITensor::SetDataType(type): for network inputs: the type the built model takes there (the network
        computes in the type it was made with; the model converts the input to it first, as from_numpy converts
        host data)."""
        if not self.is_input:
            return Status(3, f"set_data_type: tensor {self._name!r} is a node output; only inputs take a type")
        try:
            numpy_of(data_type, "data_type")
        except MagicMindError as error:
            return error.status
        if self._dtype is None:
            self._dtype = data_type
        self._model_dtype = None if data_type == self._dtype else data_type
        self._network.changed()
        return Status()

    def has_known_rank(self) -> bool:
        return self._dims is not None if self.is_input else self._info().shape is not None

    def __repr__(self) -> str:
        return f"<ITensor {self._name!r}>"


class INode:
    """magicmind::INode: an op with its inputs, attributes and output tensors."""

    def __init__(self, network, op: str, inputs: list, attrs: dict, name: str, output_count: int):
        self._network = network
        self.op = op
        self.inputs = list(inputs)
        self.attrs = dict(attrs)
        self._name = name
        self.outputs = [ITensor(network, f"{name}:{i}" if output_count > 1 else name, self, i)
                        for i in range(output_count)]

    def get_output(self, index: int = 0) -> ITensor:
        """INode::GetOutput(i)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.outputs):
            raise invalid(f"get_output: index {index!r} is out of range for {len(self.outputs)} outputs")
        return self.outputs[index]

    def get_output_count(self) -> int:
        """INode::GetOutputCount()."""
        return len(self.outputs)

    def get_input(self, index: int = 0) -> ITensor:
        """INode::GetInput(i)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.inputs):
            raise invalid(f"get_input: index {index!r} is out of range for {len(self.inputs)} inputs")
        return self.inputs[index]

    def get_input_count(self) -> int:
        return len(self.inputs)

    def get_node_name(self) -> str:
        return self._name

    def set_node_name(self, name: str) -> Status:
        if not isinstance(name, str) or not name:
            return Status(3, f"set_node_name: name must be a non-empty str, got {name!r}")
        self._name = name
        return Status()

    def _set(self, **attrs) -> Status:
        """Change attributes; the new node must still infer (else the old ones stay and the Status says why)."""
        old = dict(self.attrs)
        self.attrs.update(attrs)
        self._network.changed()
        try:
            self._network.infos()
        except MagicMindError as error:
            self.attrs = old
            self._network.changed()
            return error.status
        return Status()

    def __repr__(self) -> str:
        return f"<INode {self._name!r} ({self.op})>"
