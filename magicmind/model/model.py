"""magicmind::IModel (Python `mm.Model`): a built model, its info getters, serialization, and engines."""
from __future__ import annotations

import os

from ..dims import Dims
from ..dtypes import get_datatype_by_numpy
from ..runtime.engine import Engine, EngineConfig
from ..status import Code, MagicMindError, Status
from . import serialize


class Model:
    """mm.Model(): empty until deserialize_from_file / _buffer (or made by Builder.build_model)."""

    EngineConfig = EngineConfig

    def __init__(self, program=None, meta=None):
        self.program = program
        self.meta = dict(meta or {})

    # ---- info --------------------------------------------------------------------------------------------------

    def _need(self, call: str):
        if self.program is None:
            raise MagicMindError(Code.FAILED_PRECONDITION, f"Model.{call}: the model is empty (deserialize or build "
                                                           f"it first)")
        return self.program

    def get_name(self) -> str:
        return self.meta.get("name", "")

    def get_input_num(self) -> int:
        """IModel::GetInputNum()."""
        return len(self._need("get_input_num").inputs)

    def get_output_num(self) -> int:
        """IModel::GetOutputNum()."""
        return len(self._need("get_output_num").outputs)

    def get_input_names(self) -> list:
        """IModel::GetInputNames()."""
        p = self._need("get_input_names")
        return [p.values[k].name for k in p.inputs]

    def get_output_names(self) -> list:
        """IModel::GetOutputNames()."""
        p = self._need("get_output_names")
        return [p.values[k].name for k in p.outputs]

    def _dims(self, key) -> Dims:
        shape = self.program.values[key].shape
        return Dims(shape if shape is not None else ())

    def get_input_dimensions(self) -> list:
        """IModel::GetInputDimensions(): -1 on mutable axes."""
        p = self._need("get_input_dimensions")
        return [self._dims(k) for k in p.inputs]

    def get_output_dimensions(self) -> list:
        """IModel::GetOutputDimensions(): -1 where they follow mutable inputs."""
        p = self._need("get_output_dimensions")
        return [self._dims(k) for k in p.outputs]

    def get_input_dimension(self, index: int) -> Dims:
        return self.get_input_dimensions()[self._index(index, self.get_input_num(), "get_input_dimension")]

    def get_output_dimension(self, index: int) -> Dims:
        return self.get_output_dimensions()[self._index(index, self.get_output_num(), "get_output_dimension")]

    def get_input_data_types(self) -> list:
        """IModel::GetInputDataTypes()."""
        p = self._need("get_input_data_types")
        return [get_datatype_by_numpy(p.values[k].dtype) for k in p.inputs]

    def get_output_data_types(self) -> list:
        """IModel::GetOutputDataTypes()."""
        p = self._need("get_output_data_types")
        return [get_datatype_by_numpy(p.values[k].dtype) for k in p.outputs]

    def get_input_data_type(self, index: int):
        return self.get_input_data_types()[self._index(index, self.get_input_num(), "get_input_data_type")]

    def get_output_data_type(self, index: int):
        return self.get_output_data_types()[self._index(index, self.get_output_num(), "get_output_data_type")]

    @staticmethod
    def _index(index, count, call):
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise MagicMindError(Code.INVALID_ARGUMENT, f"Model.{call}: index {index!r} is out of range for {count}")
        return index

    def get_build_info(self) -> dict:
        """What the builder did: precision, passes and their counts, the planned peak memory."""
        return dict(self.meta.get("build", {}))

    # ---- serialization -----------------------------------------------------------------------------------------

    def serialize_to_buffer(self) -> bytes:
        """IModel::SerializeToBuffer() -> the model's bytes."""
        return serialize.dumps(self._need("serialize_to_buffer"), self.meta)

    def get_serialized_model_size(self) -> int:
        """IModel::GetSerializedModelSize()."""
        return len(self.serialize_to_buffer())

    def serialize_to_file(self, path) -> Status:
        """IModel::SerializeToFile(path)."""
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            return Status(Code.INVALID_ARGUMENT, f"serialize_to_file: {path!r} is not a path")
        try:
            data = self.serialize_to_buffer()
        except MagicMindError as error:
            return error.status
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as error:
            return Status(Code.PERMISSION_DENIED if isinstance(error, PermissionError) else Code.NOT_FOUND,
                          f"serialize_to_file: cannot write {os.fspath(path)!r}: {error.strerror}")
        return Status()

    def deserialize_from_buffer(self, data) -> Status:
        """IModel::DeserializeFromBuffer(bytes)."""
        try:
            self.program, self.meta = serialize.loads(data)
        except MagicMindError as error:
            return error.status
        return Status()

    def deserialize_from_file(self, path) -> Status:
        """IModel::DeserializeFromFile(path): a missing, truncated, corrupt or foreign file is an error Status."""
        if not isinstance(path, (str, os.PathLike)):
            return Status(Code.INVALID_ARGUMENT, f"deserialize_from_file: {path!r} is not a path")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as error:
            return Status(Code.NOT_FOUND, f"deserialize_from_file: cannot read {os.fspath(path)!r}: "
                                          f"{error.strerror}")
        status = self.deserialize_from_buffer(data)
        if not status.ok():
            return Status(status.code(), f"{os.fspath(path)}: {status.error_message()}")
        return status

    # ---- engines -----------------------------------------------------------------------------------------------

    def create_i_engine(self, config=None) -> Engine:
        """IModel::CreateIEngine([EngineConfig])."""
        if config is not None and not isinstance(config, EngineConfig):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"create_i_engine: config must be a Model.EngineConfig, not "
                                                        f"{type(config).__name__}")
        return Engine(self, config or EngineConfig())

    def __repr__(self) -> str:
        if self.program is None:
            return "<Model (empty)>"
        return f"<Model {self.get_name()!r}: {self.get_input_num()} inputs, {self.get_output_num()} outputs>"
