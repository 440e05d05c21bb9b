"""The Python side of libmagicmind_runtime's C functions (include/mm_capi.h): each takes and returns plain integers
(pointers and handles as addresses) and calls MagicMind's Python API.

Objects cross as handles of `mlusim.handles` (the table every C library of the process shares: a cnrtQueue_t from
libcnrt is the cnrt queue here). A failure returns its error::Code (queries: -code, or 0 for a handle) and leaves
its message for `mmsim_last_message` on the calling thread; nothing raises into C.
"""
from __future__ import annotations

import json
import threading
from typing import Callable

import numpy as np

from mlusim import handles

from .. import enums
from ..build.builder import Builder
from ..build.calibration import CalibDataInterface, Calibrator
from ..build.config import BuilderConfig
from ..dims import Dims
from ..dtypes import numpy_of
from ..graph.network import Network
from ..graph.tensor import ITensor
from ..model.model import Model
from ..parsers.parser import Parser
from ..runtime.context import Context
from ..runtime.engine import Engine, EngineConfig
from ..runtime.tensor import IRTTensor
from ..status import Code, MagicMindError, Status

ffi = None  # the cffi FFI of the library (install)
_state = threading.local()
FUNCTIONS: dict = {}


class _Failure(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = int(code), message


def _fail(status_or_code, message: str = ""):
    if isinstance(status_or_code, Status):
        raise _Failure(status_or_code.code(), str(status_or_code))
    raise _Failure(status_or_code, message)


def _check(status: Status) -> int:
    if not status.ok():
        _fail(status)
    return 0


def exported(kind: str) -> Callable:
    """Register the implementation of a C function; `kind` says how a failure returns: "code" (the code),
    "count" (-code), "handle" (0), "pointer" (NULL)."""
    def register(function):
        def wrapper(*args):
            _state.message = ""
            try:
                return function(*args)
            except _Failure as failure:
                code, message = failure.code, failure.message
            except MagicMindError as error:
                code, message = int(error.code), str(error)
            except Exception as error:  # noqa: BLE001 - nothing may raise into C
                code, message = int(Code.INTERNAL), f"{function.__name__}: {type(error).__name__}: {error}"
            _state.message = message
            return {"code": code, "count": -code, "handle": 0, "pointer": 0}[kind]
        wrapper.__name__ = function.__name__
        FUNCTIONS[function.__name__] = wrapper
        return wrapper
    return register


# ---- marshalling ---------------------------------------------------------------------------------------------------

def _object(handle: int, cls, what: str):
    obj = handles.from_c(handle)
    if not isinstance(obj, cls):
        _fail(Code.INVALID_ARGUMENT, f"{what}: {obj!r} is not a {cls.__name__} handle")
    return obj


def _string(pointer: int, what: str) -> str:
    if not pointer:
        _fail(Code.INVALID_ARGUMENT, f"{what} is NULL")
    return ffi.string(ffi.cast("char *", pointer)).decode()


def _write_string(text: str, pointer: int, capacity: int) -> int:
    if not pointer or capacity <= 0:
        _fail(Code.INVALID_ARGUMENT, "the string buffer is NULL or empty")
    data = text.encode()[:capacity - 1] + b"\0"
    ffi.memmove(ffi.cast("char *", pointer), data, len(data))
    return len(data) - 1


def _int64s(pointer: int, count: int, what: str) -> list:
    if count < 0 or (count and not pointer):
        _fail(Code.INVALID_ARGUMENT, f"{what}: {count} values at 0x{pointer:x}")
    array = ffi.cast("int64_t *", pointer)
    return [int(array[i]) for i in range(count)]


def _write_int64s(values, pointer: int, capacity: int, what: str) -> int:
    values = list(values)
    if len(values) > capacity or (values and not pointer):
        _fail(Code.INVALID_ARGUMENT, f"{what}: {len(values)} values do not fit {capacity}")
    array = ffi.cast("int64_t *", pointer)
    for i, v in enumerate(values):
        array[i] = int(v)
    return len(values)


def _enum(cls, value: int, what: str):
    try:
        return cls(int(value))
    except ValueError:
        _fail(Code.INVALID_ARGUMENT, f"{what}: {value} is not a {cls.__name__}")


# ---- the functions -------------------------------------------------------------------------------------------------

def _last_message(buffer, capacity):
    message = getattr(_state, "message", "")
    if buffer and capacity > 0:
        data = message.encode()[:capacity - 1] + b"\0"
        ffi.memmove(ffi.cast("char *", buffer), data, len(data))
    return len(message.encode())


FUNCTIONS["mmsim_last_message"] = _last_message


@exported("code")
def mmsim_destroy(handle):
    obj = handles.from_c(handle)
    destroy = getattr(obj, "destroy", None)
    if callable(destroy):
        destroy()
    handles.release(handle)
    return 0


@exported("handle")
def mmsim_create_model():
    return handles.to_c(Model())


@exported("code")
def mmsim_model_deserialize_from_file(model, path):
    return _check(_object(model, Model, "model").deserialize_from_file(_string(path, "path")))


@exported("code")
def mmsim_model_deserialize_from_memory(model, data, size):
    if size < 0 or (size and not data):
        _fail(Code.INVALID_ARGUMENT, f"deserialize_from_memory: {size} bytes at 0x{data:x}")
    return _check(_object(model, Model, "model").deserialize_from_buffer(bytes(ffi.buffer(ffi.cast("char *", data),
                                                                                          size))))


@exported("code")
def mmsim_model_serialize_to_file(model, path):
    return _check(_object(model, Model, "model").serialize_to_file(_string(path, "path")))


def _serialized(model) -> bytes:
    data = _object(model, Model, "model").serialize_to_buffer()
    if isinstance(data, tuple):
        status, data = data
        _check(status)
    return bytes(data)


@exported("count")
def mmsim_model_serialized_size(model):
    return len(_serialized(model))


@exported("code")
def mmsim_model_serialize_to_memory(model, data, size):
    blob = _serialized(model)
    if size < len(blob) or not data:
        _fail(Code.INVALID_ARGUMENT, f"serialize_to_memory: {size} bytes given, the model takes {len(blob)}")
    ffi.memmove(ffi.cast("char *", data), blob, len(blob))
    return 0


def _io(model, outputs):
    m = _object(model, Model, "model")
    if outputs:
        return m.get_output_names(), m.get_output_dimensions(), m.get_output_data_types()
    return m.get_input_names(), m.get_input_dimensions(), m.get_input_data_types()


def _at(items, index, what):
    if not 0 <= index < len(items):
        _fail(Code.INVALID_ARGUMENT, f"{what} index {index} (the model has {len(items)})")
    return items[index]


@exported("count")
def mmsim_model_count(model, outputs):
    return len(_io(model, outputs)[0])


@exported("count")
def mmsim_model_name(model, outputs, index, buffer, capacity):
    return _write_string(_at(_io(model, outputs)[0], index, "name"), buffer, capacity)


@exported("count")
def mmsim_model_dims(model, outputs, index, dims, capacity):
    return _write_int64s(_at(_io(model, outputs)[1], index, "dims").GetDims(), dims, capacity, "dims")


@exported("count")
def mmsim_model_dtype(model, outputs, index):
    return _at(_io(model, outputs)[2], index, "data type").value


@exported("handle")
def mmsim_model_create_engine(model, device_type, const_data_init):
    config = EngineConfig()
    config.device_type = _string(device_type, "device_type") if device_type else "MLU"
    config.set_const_data_init(bool(const_data_init))
    engine = _object(model, Model, "model").create_i_engine(config)
    if engine is None:
        _fail(Code.INTERNAL, "create_i_engine failed")
    return handles.to_c(engine)


@exported("code")
def mmsim_engine_const_data_size(engine, size):
    _write_int64s([_object(engine, Engine, "engine").query_const_data_size()], size, 1, "size")
    return 0


@exported("code")
def mmsim_engine_context_workspace_size(engine, ranks, dims, count, size):
    rank_list = _int64s(ranks, count, "ranks")
    values = _int64s(dims, sum(rank_list), "dims")
    shapes, start = [], 0
    for rank in rank_list:
        shapes.append(values[start:start + rank])
        start += rank
    _write_int64s([_object(engine, Engine, "engine").query_context_max_workspace_size(shapes)], size, 1, "size")
    return 0


@exported("handle")
def mmsim_engine_create_context(engine):
    return handles.to_c(_object(engine, Engine, "engine").create_i_context())


@exported("count")
def mmsim_context_create_tensors(context, outputs, tensors, capacity):
    ctx = _object(context, Context, "context")
    made = ctx.create_outputs() if outputs else ctx.create_inputs()
    return _write_int64s([handles.to_c(t) for t in made], tensors, capacity, "tensors")


def _tensors(pointer, count, what):
    return [_object(h, IRTTensor, what) for h in _int64s(pointer, count, what)]


@exported("code")
def mmsim_context_infer_output_shape(context, inputs, input_count, outputs, output_count):
    ctx = _object(context, Context, "context")
    return _check(ctx.infer_output_shape(_tensors(inputs, input_count, "inputs"),
                                         _tensors(outputs, output_count, "outputs") or None))


@exported("count")
def mmsim_context_enqueue(context, inputs, input_count, outputs, output_count, produced, capacity, queue):
    ctx = _object(context, Context, "context")
    given = _tensors(outputs, output_count, "outputs")
    if given and not all(t.user_memory for t in given):
        names = [t.get_name() for t in given if not t.user_memory]
        _fail(Code.INVALID_ARGUMENT, f"enqueue: output tensors {names} have no memory (SetData), or use the "
                                     f"Enqueue form that makes the outputs")
    cnrt_queue = handles.from_c(queue)
    result = list(given)
    _check(ctx.enqueue(_tensors(inputs, input_count, "inputs"), result, cnrt_queue))
    if given:
        return len(given)
    return _write_int64s([handles.to_c(t) for t in result], produced, capacity, "outputs")


@exported("count")
def mmsim_tensor_name(tensor, buffer, capacity):
    return _write_string(_object(tensor, IRTTensor, "tensor").get_name(), buffer, capacity)


@exported("count")
def mmsim_tensor_dims(tensor, dims, capacity):
    return _write_int64s(_object(tensor, IRTTensor, "tensor").get_dimensions().GetDims(), dims, capacity, "dims")


@exported("code")
def mmsim_tensor_set_dims(tensor, dims, rank):
    return _check(_object(tensor, IRTTensor, "tensor").set_dimensions(Dims(_int64s(dims, rank, "dims"))))


@exported("count")
def mmsim_tensor_dtype(tensor):
    return _object(tensor, IRTTensor, "tensor").get_data_type().value


@exported("count")
def mmsim_tensor_size(tensor):
    return _object(tensor, IRTTensor, "tensor").get_size()


@exported("code")
def mmsim_tensor_set_data(tensor, data):
    return _check(_object(tensor, IRTTensor, "tensor").set_data(data))


@exported("pointer")
def mmsim_tensor_data(tensor):
    t = _object(tensor, IRTTensor, "tensor")
    if t.get_memory_location() != enums.TensorLocation.kMLU:
        _fail(Code.FAILED_PRECONDITION, f"tensor {t.get_name()!r} holds host data: the C API reads device memory")
    return t.device_address


@exported("count")
def mmsim_tensor_location(tensor):
    return _object(tensor, IRTTensor, "tensor").get_memory_location().value


# ---- build side ----------------------------------------------------------------------------------------------------

@exported("handle")
def mmsim_create_network():
    return handles.to_c(Network())


@exported("count")
def mmsim_network_count(network, outputs):
    net = _object(network, Network, "network")
    return net.get_output_count() if outputs else net.get_input_count()


@exported("handle")
def mmsim_network_tensor(network, outputs, index):
    net = _object(network, Network, "network")
    count = net.get_output_count() if outputs else net.get_input_count()
    if not 0 <= index < count:
        _fail(Code.INVALID_ARGUMENT, f"tensor index {index} (the network has {count})")
    return handles.to_c(net.get_output(index) if outputs else net.get_input(index))


@exported("handle")
def mmsim_network_add_input(network, dtype, dims, rank):
    net = _object(network, Network, "network")
    shape = Dims(_int64s(dims, rank, "dims")) if rank >= 0 else None
    return handles.to_c(net.add_input(_enum(enums.DataType, dtype, "dtype"), shape))


@exported("code")
def mmsim_network_mark_output(network, tensor, unmark):
    net = _object(network, Network, "network")
    t = _object(tensor, ITensor, "tensor")
    return _check(net.unmark_output(t) if unmark else net.mark_output(t))


@exported("count")
def mmsim_network_tensor_dims(tensor, dims, capacity):
    return _write_int64s(_object(tensor, ITensor, "tensor").get_dimension().GetDims(), dims, capacity, "dims")


@exported("code")
def mmsim_network_tensor_set_dims(tensor, dims, rank):
    return _check(_object(tensor, ITensor, "tensor").set_dimension(Dims(_int64s(dims, rank, "dims"))))


@exported("count")
def mmsim_network_tensor_dtype(tensor):
    return _object(tensor, ITensor, "tensor").get_data_type().value


@exported("code")
def mmsim_network_tensor_set_dtype(tensor, dtype):
    return _check(_object(tensor, ITensor, "tensor").set_data_type(_enum(enums.DataType, dtype, "dtype")))


@exported("count")
def mmsim_network_tensor_name(tensor, buffer, capacity):
    return _write_string(_object(tensor, ITensor, "tensor").get_tensor_name(), buffer, capacity)


@exported("handle")
def mmsim_create_parser(kind):
    return handles.to_c(Parser(_enum(enums.ModelKind, kind, "kind")))


@exported("code")
def mmsim_parser_set_model_param(parser, key, value):
    text = _string(value, "value")
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        _fail(Code.INVALID_ARGUMENT, f"set_model_param: {text!r} is not a value")
    if isinstance(decoded, list) and decoded and all(isinstance(v, str) and hasattr(enums.DataType, v)
                                                     for v in decoded):
        decoded = [getattr(enums.DataType, v) for v in decoded]
    return _check(_object(parser, Parser, "parser").set_model_param(_string(key, "key"), decoded))


@exported("code")
def mmsim_parser_parse(parser, network, path, second):
    p = _object(parser, Parser, "parser")
    net = _object(network, Network, "network")
    paths = [_string(path, "path")] + ([_string(second, "second path")] if second else [])
    return _check(p.parse(net, *paths))


@exported("handle")
def mmsim_create_builder_config():
    return handles.to_c(BuilderConfig())


@exported("code")
def mmsim_builder_config_parse(config, text, from_file):
    c = _object(config, BuilderConfig, "config")
    return _check(c.parse_from_file(_string(text, "path")) if from_file else c.parse_from_string(_string(text, "json")))


@exported("handle")
def mmsim_create_builder():
    return handles.to_c(Builder())


@exported("handle")
def mmsim_builder_build_model(builder, name, network, config):
    b = _object(builder, Builder, "builder")
    c = _object(config, BuilderConfig, "config") if config else None
    model = b.build_model(_string(name, "name"), _object(network, Network, "network"), c)
    if model is None:
        _fail(b.last_status)
    return handles.to_c(model)


class _CData(CalibDataInterface):
    """A program's ICalibData: every method calls back into it."""

    def __init__(self, obj, shape, data_type, sample, next_fn, reset):
        super().__init__()
        self._obj = ffi.cast("void *", obj)
        self._shape = ffi.cast("mmsim_calib_shape_fn", shape)
        self._type = ffi.cast("mmsim_calib_int_fn", data_type)
        self._sample = ffi.cast("mmsim_calib_sample_fn", sample)
        self._next = ffi.cast("mmsim_calib_status_fn", next_fn)
        self._reset = ffi.cast("mmsim_calib_status_fn", reset)

    def get_shape(self):
        dims = ffi.new("int64_t[16]")
        rank = self._shape(self._obj, dims, 16)
        return Dims([int(dims[i]) for i in range(min(rank, 16))])

    def get_data_type(self):
        return enums.DataType(int(self._type(self._obj)))

    def get_sample(self):
        pointer = self._sample(self._obj)
        shape = self.get_shape().GetDims()
        dtype = numpy_of(self.get_data_type())
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if pointer == ffi.NULL:
            raise MagicMindError(Code.INVALID_ARGUMENT, "ICalibData::GetSample returned NULL")
        return np.frombuffer(bytes(ffi.buffer(ffi.cast("char *", pointer), nbytes)), dtype).reshape(shape)

    def _status(self, function):
        message = ffi.new("char[1024]")
        code = function(self._obj, message, 1024)
        return Status(Code(int(code)), ffi.string(message).decode()) if code else Status()

    def next(self):
        return self._status(self._next)

    def reset(self):
        return self._status(self._reset)


@exported("handle")
def mmsim_create_calib_data(obj, shape, data_type, sample, next_fn, reset):
    if not all((obj, shape, data_type, sample, next_fn, reset)):
        _fail(Code.INVALID_ARGUMENT, "create_calib_data: a NULL object or method")
    return handles.to_c(_CData(obj, shape, data_type, sample, next_fn, reset))


@exported("handle")
def mmsim_create_calibrator(data, count):
    return handles.to_c(Calibrator([_object(h, _CData, "calib data") for h in _int64s(data, count, "data")]))


@exported("code")
def mmsim_calibrator_set_algorithm(calibrator, algorithm):
    return _check(_object(calibrator, Calibrator, "calibrator").set_quantization_algorithm(
        _enum(enums.QuantizationAlgorithm, algorithm, "algorithm")))


@exported("code")
def mmsim_calibrator_calibrate(calibrator, network, config):
    return _check(_object(calibrator, Calibrator, "calibrator").calibrate(
        _object(network, Network, "network"), _object(config, BuilderConfig, "config")))


def install(library_ffi, library) -> None:
    """Bind every C function's callback to its implementation (called by the embedded init code)."""
    global ffi
    ffi = library_ffi
    for name, function in FUNCTIONS.items():
        library_ffi.def_extern(name=f"_mmsim_py_{name}")(function)
