"""What the generated wrappers call, bound to one library's ffi.

Every pointer and handle reaches Python as an integer (the C shims of `build.py` pass them as `intptr_t`), so a
device pointer or a handle costs no conversion; the helpers here turn the other pointers into what the Python API
takes (arrays, host scalars, host buffers) and write outputs through them.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlusim import device as devices
from mlusim.errors import ArgumentFault, NullPointerFault
from mlusim import handles
from mlusim.hostmem import data_address

from . import failures, kernels

#: CNNL data types -> how a host scalar of that type is stored (numpy dtype names; bfloat16 through ml_dtypes)
_DTYPE_STORAGE = {1: "float16", 2: "float32", 3: "int8", 4: "int16", 5: "int32", 6: "int32", 7: "uint8", 8: "bool",
                  9: "int64", 11: "uint32", 12: "uint64", 13: "uint16", 14: "float64", 17: "bfloat16"}
#: CNNL data types whose host scalars (alpha, beta of cnnlOpTensor) are int32_t; DOUBLE (14) is double, the rest float
_INTEGER_DTYPES = frozenset((3, 4, 5, 6, 7, 8, 9, 11, 12, 13))
_MAX_ARRAY = 1 << 24
#: a host buffer the caller sizes (a copy's host side, a conversion's elements): up to the 47-bit user address space
_MAX_HOST_BYTES = 1 << 47
#: cnrtMemTransDir_t -> (dst is device memory, src is device memory)
_EXPECTED_SIDES = {0: (True, False), 1: (True, True), 2: (False, True), 3: (False, False), 4: (True, True)}
_NO_DIRECTION = 5
_RING = 64


class Helpers:
    """The helper namespace of the wrappers of one library."""

    def __init__(self, ffi, family: failures.Family):
        self.ffi = ffi
        self.family = family
        self._strings: dict = {}
        self._ring: list = []
        cast, unpack, buffer = ffi.cast, ffi.unpack, ffi.buffer
        frombuffer, uint8 = np.frombuffer, np.uint8
        from_c = handles.from_c
        addresses = ffi.typeof("uintptr_t *")
        char_p = ffi.typeof("char *")
        float_p, double_p, int32_p = ffi.typeof("float *"), ffi.typeof("double *"), ffi.typeof("int32_t *")

        def array(c: int, n, param: str):
            n = _count(n, param)
            if n and not c:
                raise NullPointerFault(f"NULL array of {n} elements", param, 0)
            return n

        def seq_value(c, n, param, ctype):
            n = array(c, n, param)
            return unpack(cast(ctype, c), n) if n else []

        def seq_handle(c, n, param, _ctype=None):
            n = array(c, n, param)
            return [from_c(p) for p in unpack(cast(addresses, c), n)] if n else []

        def seq_device(c, n, param, _ctype=None):
            n = array(c, n, param)
            return [p or None for p in unpack(cast(addresses, c), n)] if n else []

        def release_each(c, n, param):
            n = array(c, n, param)
            for address in (unpack(cast(addresses, c), n) if n else ()):
                handles.release(address)

        def memcpy_side(index: int):
            """One side of a copy (index 0 = dst, 1 = src): a device address, or a host view of `nbytes`."""
            param = ("dst", "src")[index]

            def side(c, nbytes, direction):
                expected = _EXPECTED_SIDES.get(direction)
                if expected is None:
                    if direction != _NO_DIRECTION or not c or devices.owner_of(c) is not None:
                        return c  # a device pointer (NULL: the API's null-pointer error), or not a direction
                elif expected[index]:
                    return c
                if not c and nbytes:
                    raise NullPointerFault("NULL host pointer", param, 0)
                return frombuffer(buffer(cast(char_p, c), nbytes), uint8)
            return side

        def scalar(c, ctype):
            return cast(ctype, c)[0] if c else None

        def scalar_compute(c, desc):
            """A host scalar of a descriptor's computation type: float for HALF/FLOAT/BFLOAT16, double for DOUBLE,
            int32_t for the integer types."""
            if not c:
                return None
            code = getattr(desc, "compute_dtype", None) or getattr(desc, "dtype", None)
            if code == 14:
                return cast(double_p, c)[0]
            return cast(int32_p if code in _INTEGER_DTYPES else float_p, c)[0]

        def text(c):
            return ffi.string(cast(char_p, c)).decode(errors="replace") if c else None

        def host_view(c, nbytes):
            return frombuffer(buffer(cast(char_p, c), nbytes), uint8)

        self.host_view = host_view
        self.namespace = {
            "_ffi": ffi, "_handle": from_c, "_to_c": handles.to_c, "_release": handles.release,
            "_release_each": release_each, "_seq_value": seq_value, "_seq_handle": seq_handle,
            "_seq_device": seq_device, "_null": _null, "_ADDRESSES": addresses, "_fields": self._fields,
            "_scalar": scalar, "_scalar_dtype": self._scalar_dtype, "_scalar_compute": scalar_compute,
            "_host_int": self._host_int, "_bytes": self._bytes, "_memcpy_dst": memcpy_side(0),
            "_memcpy_src": memcpy_side(1), "_any_pointer": self._any_pointer, "_host_pointer": self._host_pointer,
            "_callback": self._callback, "_kernel": kernels.lookup, "_kernel_args": self._kernel_args,
            "_address": _address, "_fill_struct": self._fill_struct, "_store_array": self._store_array,
            "_store_host_int": self._store_host_int, "_cstr": self._cstr, "_error_string": self._error_string,
            "_transient": self._transient, "_status": _status, "_store_text": self._store_text,
            "_host_buffer": self._host_buffer, "_text": text, "_scalars": self._scalars,
        }

    # ---- inputs ---------------------------------------------------------------------------------------------
    def _fields(self, struct) -> tuple:
        return tuple(getattr(struct, name) for name, _ in self.ffi.typeof(struct).fields)

    def _scalar_dtype(self, c, desc):
        """A host scalar stored as the data type of descriptor `desc` (for an unknown type nothing is read: the
        API rejects the descriptor itself)."""
        if not c:
            return None
        storage = _DTYPE_STORAGE.get(getattr(desc, "dtype", None))
        if storage is None:
            return None
        dtype = _numpy_dtype(storage)
        return np.frombuffer(self.host_view(c, dtype.itemsize), dtype)[0].item()

    def _scalars(self, c, desc, n, compute: bool, indirect: bool, param: str):
        """`n` host scalars (None: one) of descriptor `desc`'s data type or computation type, at `c` (indirect: at
        the address `c` points to); NULL = None, and nothing is read for a descriptor of no known type (the API
        rejects it)."""
        if c and indirect:
            c = self.ffi.cast(self.namespace["_ADDRESSES"], c)[0]
        if not c:
            return None
        code = getattr(desc, "dtype", None)
        if compute:
            storage = "float64" if code == 14 else "int32" if code in _INTEGER_DTYPES else "float32"
        else:
            storage = _DTYPE_STORAGE.get(code)
            if storage is None:
                return None
        dtype = _numpy_dtype(storage)
        count = 1 if n is None else _count(n, param)
        values = [value.item() for value in np.frombuffer(self.host_view(c, dtype.itemsize * count), dtype)]
        return values[0] if n is None else values

    def _host_int(self, c, size, param, size_param):
        if not c:
            return None
        if size not in (1, 2, 4, 8):
            raise ArgumentFault(f"{size} bytes is not the size of an integer (1, 2, 4 or 8)", size_param)
        return int.from_bytes(self.host_view(c, size), "little", signed=True)

    def _bytes(self, c, size, param):
        if not c:
            return None
        return bytes(self.host_view(c, _count(size, param)))

    def _any_pointer(self, c):
        if not c:
            return None
        if devices.owner_of(c) is not None:
            return c
        return self.host_view(c, 1)

    def _host_pointer(self, c):
        return self.host_view(c, 1) if c else None

    def _callback(self, c, ctype):
        """A C function pointer as a Python callable taking the (integer) user data."""
        if not c:
            return None
        ffi = self.ffi
        function = ffi.cast(ctype, c)

        def call(user_data, _function=function):
            _function(ffi.cast("void *", user_data or 0))

        call.__name__ = f"host function 0x{c:x}"
        return call

    def _kernel_args(self, c, kernel, param):
        return kernels.read_arguments(self.ffi, kernel, c, param)

    # ---- outputs --------------------------------------------------------------------------------------------
    def _fill_struct(self, c, value, ctype, keep=()) -> None:
        """Zero the struct (but its `keep` fields, which the caller set), then set each C field from the Python
        object's attribute of the same name (case ignored)."""
        ffi = self.ffi
        pointer = ffi.cast(ctype, c)
        item = ffi.typeof(pointer).item
        size = ffi.sizeof(item)
        kept = {name: getattr(pointer, name) for name in keep}
        ffi.memmove(pointer, bytes(size), size)
        for name, field_value in kept.items():
            setattr(pointer, name, field_value)
        source = attributes(value)
        for name, field in item.fields:
            if name.lower() in source:
                _assign(ffi, pointer, name, field.type, source[name.lower()])

    def _store_array(self, c, values, capacity, ctype, handle_elements, param) -> None:
        values = list(values)
        if capacity is not None and len(values) > capacity:
            raise ArgumentFault(f"{len(values)} results do not fit the {capacity} elements given", param)
        target = self.ffi.cast(ctype, c)
        for index, value in enumerate(values):
            target[index] = handles.to_c(value) if handle_elements else value

    def _store_text(self, c, text, capacity, param, capacity_param) -> None:
        raw = str(text).encode()
        if not isinstance(capacity, int) or capacity <= len(raw):
            raise ArgumentFault(f"{text!r} needs {len(raw) + 1} bytes with its NUL; {capacity_param} is {capacity}",
                                capacity_param)
        self.ffi.memmove(self.ffi.cast("char *", c), raw + b"\0", len(raw) + 1)

    def _host_buffer(self, c, size, param):
        size = _count(size, param, _MAX_HOST_BYTES)
        if not c:
            if size:
                raise NullPointerFault(f"NULL host buffer of {size} bytes", param, 0)
            return None
        return self.host_view(c, size)

    def _store_host_int(self, c, value, size, param, size_param) -> None:
        if size not in (1, 2, 4, 8):
            raise ArgumentFault(f"{size} bytes is not the size of an integer (1, 2, 4 or 8)", size_param)
        if not c:
            raise NullPointerFault("NULL output buffer", param, 0)
        try:
            raw = int(value).to_bytes(size, "little", signed=int(value) < 0)
        except OverflowError:
            raise ArgumentFault(f"the value {value} does not fit {size} bytes", size_param) from None
        self.ffi.memmove(self.ffi.cast("char *", c), raw, size)

    def _cstr(self, text):
        """A NUL-terminated copy of a Python string that stays valid (one per distinct string)."""
        kept = self._strings.get(text)
        if kept is None:  # setdefault: two threads making the same string both get the one that stays
            kept = self._strings.setdefault(text, self.ffi.new("char[]", str(text).encode()))
        return kept

    def _error_string(self, text, code):
        """The status description, with this thread's last failure message appended when it had this status."""
        detail = failures.detail_for(self.family, code)
        if not detail:
            return self._cstr(text)
        return self._transient(f"{text} ({detail})")

    def _transient(self, text):
        """A NUL-terminated copy of a string that stays valid while the next 63 such strings are made."""
        kept = self.ffi.new("char[]", str(text).encode(errors="replace"))
        self._ring.append(kept)
        del self._ring[:-_RING]
        return kept


def _null(param: str) -> NullPointerFault:
    return NullPointerFault("NULL pointer for an output", param, 0)


def _count(n, param: str, limit: int = _MAX_ARRAY) -> int:
    if n is None:
        raise ArgumentFault("an array without a count", param)
    n = int(n)
    if n < 0:
        raise ArgumentFault(f"negative element count {n}", param)
    if n > limit:
        raise ArgumentFault(f"{n} elements is beyond any plausible array", param)
    return n


def _status(value) -> int:
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


def attributes(value: Any) -> dict:
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
        raw = bytes(value)
        size = min(len(raw), ffi.sizeof(ftype))
        ffi.memmove(ffi.addressof(pointer[0], name), raw[:size], size)
    elif kind == "pointer":
        setattr(pointer, name, ffi.cast(ftype, _address(value)))
    else:
        setattr(pointer, name, value)
