"""Generic marshalling: one C declaration + its Python function + its annotations -> the Python function cffi calls.

`Binder` checks the three against each other (every Python parameter comes from a C parameter, every C parameter
goes somewhere) and compiles a straight-line wrapper:

    def cnnlGetTensorDescriptor(c_desc, c_layout, c_dtype, c_dimNb, c_dims):
        try:
            a_desc = _handle(c_desc)
            if c_layout == _NULL: raise _null('layout')
            ...
            _r = _py(a_desc)
            c_layout[0] = _r[0]
            ...
            return 0
        except BaseException as _e:
            return _fail(_e)

`Helpers` holds what the generated code calls, bound to one library's ffi.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
from typing import Any, Callable, Optional

import numpy as np

from mlusim import device as devices
from mlusim.errors import ArgumentFault, NullPointerFault
from mlusim.hostmem import data_address

from . import failures, handles, kernels
from .cdecl import CType, Function
from .kinds import BindingError, Kind, default_kind

#: CNNL data types -> how a host scalar of that type is stored (numpy dtype names; bfloat16 through ml_dtypes)
_DTYPE_STORAGE = {1: "float16", 2: "float32", 3: "int8", 4: "int16", 5: "int32", 6: "int32", 7: "uint8", 8: "bool",
                  9: "int64", 11: "uint32", 12: "uint64", 13: "uint16", 14: "float64", 17: "bfloat16"}
_MAX_ARRAY = 1 << 24
_EXPECTED_SIDES = {0: (True, False), 1: (True, True), 2: (False, True), 3: (False, False), 4: (True, True)}
_NO_DIRECTION = 5


@dataclasses.dataclass
class Binding:
    """How one C function is bound: its declaration, Python function, parameter kinds and options."""

    function: Function
    python: Callable
    kinds: dict
    destroys: tuple = ()
    error_string: Optional[str] = None  # the status parameter of a get-error-string function
    transient: bool = False  # a `const char *` result that changes from call to call (kept in a ring)


class Gen:
    """The source of one wrapper being generated, and the namespace its names live in."""

    def __init__(self, ffi, namespace: dict):
        self.ffi = ffi
        self.namespace = namespace
        self.pre: list = []
        self.post: list = []
        self._numbers = itertools.count()

    @staticmethod
    def c(param: str) -> str:
        return f"c_{param}"

    @staticmethod
    def a(param: str) -> str:
        return f"a_{param}"

    def bind(self, value: Any, hint: str) -> str:
        name = f"_{hint}{next(self._numbers)}"
        self.namespace[name] = value
        return name


def resolve_kinds(function: Function, annotations: dict) -> dict:
    """param -> Kind for every C parameter that has a role of its own (outputs used by another kind, such as an
    array's length, are written by that kind and get none)."""
    for name in annotations:
        if name not in dict(function.params):
            raise BindingError(f"{function.name}: annotation for unknown parameter {name!r}")
    used = {u for kind in annotations.values() for u in kind.uses()}
    kinds = {}
    for param, ctype in function.params:
        kind = annotations.get(param)
        if kind is None:
            try:
                kind = default_kind(param, ctype)
            except BindingError as error:
                raise BindingError(f"{function.name}: {error}") from None
            if kind.output and param in used:
                continue
        try:
            kind.validate(param, ctype)
        except BindingError as error:
            raise BindingError(f"{function.name}: {error}") from None
        kinds[param] = kind
    return kinds


def python_parameters(python: Callable) -> list:
    return list(inspect.signature(python).parameters.values())


def check(binding: Binding) -> None:
    """Every Python parameter without a default comes from an input C parameter of the same name; every input C
    parameter is a Python parameter or used by another parameter's kind."""
    function = binding.function
    pyparams = {p.name: p for p in python_parameters(binding.python)}
    inputs = [p for p, k in binding.kinds.items() if not k.output]
    used = {u for k in binding.kinds.values() for u in k.uses()}
    for param in inputs:
        if param not in pyparams and param not in used:
            raise BindingError(f"{function.name}: C parameter {param!r} matches no parameter of the Python function "
                               f"{binding.python.__name__}{inspect.signature(binding.python)}")
    for name, p in pyparams.items():
        if name not in inputs and p.default is inspect.Parameter.empty:
            raise BindingError(f"{function.name}: Python parameter {name!r} has no C parameter")
    for param in binding.destroys:
        if param not in dict(function.params):
            raise BindingError(f"{function.name}: destroys unknown parameter {param!r}")


def generate(binding: Binding, helpers: "Helpers", family: failures.Family) -> Callable:
    """Compile the wrapper of one binding."""
    check(binding)
    function = binding.function
    namespace = dict(helpers.namespace)
    g = Gen(helpers.ffi, namespace)
    namespace["_py"] = binding.python
    namespace["_fail"] = lambda exc, _name=function.name: failures.record(family, _name, exc)
    params = [p for p, _ in function.params]
    ctypes = dict(function.params)
    kinds = binding.kinds
    order = [p for p in params if p in kinds and not kinds[p].output and kinds[p].simple] + \
            [p for p in params if p in kinds and not kinds[p].output and not kinds[p].simple]
    outputs = [p for p in params if p in kinds and kinds[p].output]
    for p in outputs:
        kinds[p].emit_check(g, p, ctypes[p])
    for p in order:
        kinds[p].emit(g, p, ctypes[p])
    g.pre.append(f"_r = _py({_call_arguments(binding, kinds)})")
    if len(outputs) == 1:
        kinds[outputs[0]].emit_store(g, outputs[0], ctypes[outputs[0]], "_r")
    elif outputs:
        g.post.append(f"if not isinstance(_r, tuple) or len(_r) != {len(outputs)}: "
                      f"raise TypeError('expected {len(outputs)} results, got %r' % (_r,))")
        for index, p in enumerate(outputs):
            kinds[p].emit_store(g, p, ctypes[p], f"_r[{index}]")
    for p in binding.destroys:
        _emit_release(g, p, kinds[p])
    success, failure = _returns(binding, family, g, bool(outputs))
    body = g.pre + g.post + [success]
    source = (f"def {function.name}({', '.join(g.c(p) for p in params)}):\n    try:\n"
              + "".join(f"        {line}\n" for line in body)
              + f"    except BaseException as _e:\n        _code = _fail(_e)\n        return {failure}\n")
    exec(compile(source, f"<mlusim.capi wrapper {function.name}>", "exec"), namespace)  # noqa: S102
    wrapper = namespace[function.name]
    wrapper.source = source
    return wrapper


def _emit_release(g: Gen, param: str, kind: Kind) -> None:
    """Forget the handles a destroy function destroyed: the handle, the handle at an address, or an array of them."""
    from .kinds import Deref, HandleIn, Seq
    if isinstance(kind, HandleIn):
        g.post.append(f"_release({g.c(param)})")
    elif isinstance(kind, Deref):
        g.post.append(f"_release({g.c(param)}[0])")
    elif isinstance(kind, Seq):
        g.post.append(f"for _h in _seq_pointers({g.c(param)}, len({g.a(param)}), {param!r}): _release(_h)")
    else:
        raise BindingError(f"{g.namespace.get('_name', '?')}: cannot release parameter {param!r}")


def _call_arguments(binding: Binding, kinds: dict) -> str:
    """Python arguments in the Python function's order: positional while every one is given, then keywords."""
    provided = {p for p, k in kinds.items() if not k.output}
    parts, keywords = [], False
    for p in python_parameters(binding.python):
        if p.name not in provided:
            keywords = True
            continue
        parts.append(f"{p.name}=a_{p.name}" if keywords else f"a_{p.name}")
    return ", ".join(parts)


def _returns(binding: Binding, family: failures.Family, g: Gen, has_outputs: bool) -> tuple:
    """(return statement on success, expression returned on failure)."""
    result = binding.function.result
    if result.category == "void" and result.pointers == 0:
        return "return None", "None"
    if result.pointers == 1 and result.base == "char":
        if binding.error_string:
            return f"return _error_string(_r, {g.a(binding.error_string)})", "_NULL"
        if binding.transient:
            return "return _transient(_r)", "_NULL"
        return "return _cstr(_r)", "_NULL"
    if result.spelling == family.status_type:
        if has_outputs:
            return "return 0", "_code"
        return "return _status(_r)", "_code"
    if result.pointers == 0 and result.category in ("integer", "float", "bool"):
        return "return _r", "0"
    raise BindingError(f"{binding.function.name}: cannot return {result.spelling!r}")


class Helpers:
    """The functions generated wrappers call, bound to one library's ffi."""

    def __init__(self, ffi, family: failures.Family):
        self.ffi = ffi
        self.family = family
        self._strings: dict = {}
        self._composed: list = []
        cast, NULL, unpack = ffi.cast, ffi.NULL, ffi.unpack
        uintptr = ffi.typeof("uintptr_t")
        voidpp = ffi.typeof("void **")
        from_c = handles.from_c

        def _handle(c):
            return from_c(int(cast(uintptr, c)))

        def _dev(c):
            return int(cast(uintptr, c)) or None

        def _seq_value(c, n, param, ctype):
            n = _count(n, param)
            if not n:
                return []
            if c == NULL:
                raise NullPointerFault(f"NULL array of {n} elements", param, 0)
            return unpack(cast(ctype, c), n)

        def _seq_handle(c, n, param, _ctype):
            return [from_c(int(cast(uintptr, p))) for p in _seq_pointers(c, n, param)]

        def _seq_device(c, n, param, _ctype):
            return [int(cast(uintptr, p)) or None for p in _seq_pointers(c, n, param)]

        def _seq_pointers(c, n, param):
            n = _count(n, param)
            if not n:
                return []
            if c == NULL:
                raise NullPointerFault(f"NULL array of {n} elements", param, 0)
            return unpack(cast(voidpp, c), n)

        self.namespace = {
            "_ffi": ffi, "_NULL": NULL, "_VOIDP": ffi.typeof("void *"),
            "_handle": _handle, "_dev": _dev, "_to_c": handles.to_c, "_release": self._release,
            "_seq_value": _seq_value, "_seq_handle": _seq_handle, "_seq_device": _seq_device,
            "_seq_pointers": _seq_pointers, "_transient": self._transient,
            "_null": _null, "_fields": self._fields, "_scalar": self._scalar, "_scalar_dtype": self._scalar_dtype,
            "_scalar_compute": self._scalar_compute, "_host_int": self._host_int, "_bytes": self._bytes,
            "_memcpy_side": self._memcpy_side, "_any_pointer": self._any_pointer,
            "_host_pointer": self._host_pointer, "_callback": self._callback, "_kernel": self._kernel,
            "_kernel_args": self._kernel_args, "_address": _address, "_fill_struct": self._fill_struct,
            "_store_array": self._store_array, "_store_host_int": self._store_host_int, "_cstr": self._cstr,
            "_error_string": self._error_string, "_status": _status,
        }

    # ---- inputs ---------------------------------------------------------------------------------------------
    def _release(self, c) -> None:
        handles.release(int(self.ffi.cast("uintptr_t", c)))

    def _fields(self, struct) -> tuple:
        return tuple(getattr(struct, name) for name, _ in self.ffi.typeof(struct).fields)

    def _scalar(self, c, ctype):
        if c == self.ffi.NULL:
            return None
        return self.ffi.cast(ctype, c)[0]

    def _scalar_dtype(self, c, desc):
        """A host scalar stored as the data type of descriptor `desc` (an unknown type reads nothing: the API
        rejects the descriptor itself)."""
        if c == self.ffi.NULL:
            return None
        storage = _DTYPE_STORAGE.get(getattr(desc, "dtype", None))
        if storage is None:
            return None
        dtype = _numpy_dtype(storage)
        return np.frombuffer(self.ffi.buffer(self.ffi.cast("char *", c), dtype.itemsize), dtype)[0].item()

    def _scalar_compute(self, c, desc):
        """A host scalar of a descriptor's computation type: float for HALF/FLOAT/BFLOAT16, double for DOUBLE,
        int32_t for the integer types."""
        if c == self.ffi.NULL:
            return None
        code = getattr(desc, "compute_dtype", None) or getattr(desc, "dtype", None)
        if code == 14:
            return self.ffi.cast("double *", c)[0]
        if code in (3, 4, 5, 6, 7, 8, 9, 11, 12, 13):
            return self.ffi.cast("int32_t *", c)[0]
        return self.ffi.cast("float *", c)[0]

    def _host_int(self, c, size, param, size_param):
        if c == self.ffi.NULL:
            return None
        if size not in (1, 2, 4, 8):
            raise ArgumentFault(f"{size} bytes is not the size of an integer (1, 2, 4 or 8)", size_param)
        return int.from_bytes(self.ffi.buffer(self.ffi.cast("char *", c), size), "little", signed=True)

    def _bytes(self, c, size, param):
        if c == self.ffi.NULL:
            return None
        return bytes(self.ffi.buffer(self.ffi.cast("char *", c), _count(size, param)))

    def _memcpy_side(self, c, nbytes, direction, is_dst):
        address = int(self.ffi.cast("uintptr_t", c))
        expected = _EXPECTED_SIDES.get(direction)
        if expected is not None:
            device = expected[0 if is_dst else 1]
        elif direction == _NO_DIRECTION:
            device = devices.owner_of(address) is not None
        else:
            device = True  # not a direction: the API rejects it before touching either side
        if device:
            return address
        if not address:
            return None
        return self._host_view(c, nbytes)

    def _host_view(self, c, nbytes):
        return np.frombuffer(self.ffi.buffer(self.ffi.cast("char *", c), nbytes), np.uint8)

    def _any_pointer(self, c):
        address = int(self.ffi.cast("uintptr_t", c))
        if not address:
            return None
        if devices.owner_of(address) is not None:
            return address
        return self._host_view(c, 1)

    def _host_pointer(self, c):
        if c == self.ffi.NULL:
            return None
        return self._host_view(c, 1)

    def _callback(self, c):
        if c == self.ffi.NULL:
            return None

        def call(user_data, _function=c):
            _function(user_data)

        call.__name__ = f"host function 0x{int(self.ffi.cast('uintptr_t', c)):x}"
        return call

    def _kernel(self, c, param):
        return kernels.lookup(int(self.ffi.cast("uintptr_t", c)), param)

    def _kernel_args(self, c, kernel, param):
        return kernels.read_arguments(self.ffi, kernel, c, param)

    # ---- outputs --------------------------------------------------------------------------------------------
    def _fill_struct(self, pointer, value) -> None:
        """Zero the struct, then set each C field from the Python object's attribute of the same name (case
        ignored)."""
        ffi = self.ffi
        ctype = ffi.typeof(pointer).item
        ffi.memmove(pointer, bytes(ffi.sizeof(ctype)), ffi.sizeof(ctype))
        source = attributes(value)
        for name, field in ctype.fields:
            if name.lower() in source:
                _assign(ffi, pointer, name, field.type, source[name.lower()])

    def _store_array(self, c, values, capacity, handle_type, param) -> None:
        values = list(values)
        if capacity is not None and len(values) > capacity:
            raise ArgumentFault(f"{len(values)} results do not fit the {capacity} elements given", param)
        for index, value in enumerate(values):
            c[index] = value if handle_type is None else self.ffi.cast(handle_type, handles.to_c(value))

    def _store_host_int(self, c, value, size, param, size_param) -> None:
        if size not in (1, 2, 4, 8):
            raise ArgumentFault(f"{size} bytes is not the size of an integer (1, 2, 4 or 8)", size_param)
        if c == self.ffi.NULL:
            raise NullPointerFault("NULL output buffer", param, 0)
        try:
            raw = int(value).to_bytes(size, "little", signed=int(value) < 0)
        except OverflowError:
            raise ArgumentFault(f"the value {value} does not fit {size} bytes", size_param) from None
        self.ffi.memmove(c, raw, size)

    def _cstr(self, text):
        """A NUL-terminated copy of a Python string that stays valid (one per distinct string)."""
        kept = self._strings.get(text)
        if kept is None:
            kept = self._strings[text] = self.ffi.new("char[]", str(text).encode())
        return kept

    def _error_string(self, text, code):
        """The status description, with this thread's last failure message appended when it had this status."""
        detail = failures.detail_for(self.family, code)
        if not detail:
            return self._cstr(text)
        return self._transient(f"{text} ({detail})")

    def _transient(self, text):
        """A NUL-terminated copy of a string that stays valid while the next 63 such strings are made."""
        composed = self.ffi.new("char[]", str(text).encode(errors="replace"))
        self._composed.append(composed)
        del self._composed[:-64]
        return composed


def _null(param: str) -> NullPointerFault:
    return NullPointerFault("NULL pointer for an output", param, 0)


def _count(n, param: str) -> int:
    if n is None:
        raise ArgumentFault("an array without a count", param)
    n = int(n)
    if n < 0:
        raise ArgumentFault(f"negative element count {n}", param)
    if n > _MAX_ARRAY:
        raise ArgumentFault(f"{n} elements is beyond any plausible array", param)
    return n


def _status(value) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"the Python function returned {value!r} where C returns a status")
    return value


def _address(value) -> int:
    """A `void *` output from Python: a device address (int), a host buffer (its data address) or None."""
    if value is None:
        return 0
    if isinstance(value, np.ndarray):
        return data_address(value)
    return int(value)


def _numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def attributes(value) -> dict:
    """A Python result object's fields by lower-cased name (dataclass fields, slots or instance attributes)."""
    if dataclasses.is_dataclass(value):
        names = [f.name for f in dataclasses.fields(value)]
    elif hasattr(value, "__slots__"):
        names = list(value.__slots__)
    else:
        names = list(vars(value))
    return {name.lower(): getattr(value, name) for name in names}


def _assign(ffi, pointer, name: str, ftype, value) -> None:
    kind = ftype.kind
    if kind == "array" and ftype.item.cname == "char":
        raw = value.encode() if isinstance(value, str) else bytes(value)
        setattr(pointer, name, raw[:ftype.length])
    elif kind == "array":
        setattr(pointer, name, list(value)[:ftype.length])
    elif kind == "struct":
        inner = getattr(pointer, name)
        raw = bytes(value)
        ffi.memmove(ffi.addressof(inner), raw[:ffi.sizeof(ftype)], min(len(raw), ffi.sizeof(ftype)))
    elif kind == "pointer":
        setattr(pointer, name, ffi.cast(ftype, _address(value)))
    else:
        setattr(pointer, name, value)


def bind(function: Function, python: Callable, annotations: Optional[dict] = None, destroys=(),
         error_string: Optional[str] = None, transient: bool = False) -> Binding:
    """A checked Binding (raises BindingError when the declaration, function and annotations disagree)."""
    kinds = resolve_kinds(function, dict(annotations or {}))
    if isinstance(destroys, str):
        destroys = (destroys,)
    binding = Binding(function, python, kinds, tuple(destroys), error_string, transient)
    check(binding)
    return binding


__all__ = ["Binding", "BindingError", "Helpers", "Kind", "bind", "generate", "CType"]
