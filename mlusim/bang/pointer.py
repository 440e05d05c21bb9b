"""Typed pointers into the simulated memory spaces (GDRAM, NRAM, WRAM, SRAM), usable in Python and compiled code.

A `Ptr` is (base, offset, space, name): `base` is the whole typed allocation it points into (a GDRAM block or one
on-chip buffer), `offset` an element offset that pointer arithmetic moves (`p + 4`, `p - 4`) freely, even outside
the allocation; only an access checks that [offset, offset + count) lies inside `base`, so a negative offset is
caught and reported as such. Half and bfloat16 are stored as uint16 bits (see dtypes). `log` is the address of the
state row that records the pointer's element accesses for the sanitizer (mlusim.bang.accesslog), 0 when none does.
"""
from __future__ import annotations

import operator

import numpy as np
from numba import types
from numba.core import cgutils
from numba import from_dtype
from numba.extending import (NativeValue, box, intrinsic, make_attribute_wrapper, models, overload,
                             register_jitable, register_model, typeof_impl, unbox)

from . import accesslog
from .caching import jit
from .dtypes import (ELEMENT_TYPES, ElementType, ElementTypeToken, bfloat16_to_f32, f32_to_bfloat16, f32_to_half,
                     half_to_f32)
from .faults import KernelTrap

GDRAM, NRAM, WRAM, SRAM, LDRAM = 0, 1, 2, 3, 4
SPACE_NAMES = ("GDRAM", "NRAM", "WRAM", "SRAM", "LDRAM")
assert (accesslog.GDRAM_SPACE, accesslog.SRAM_SPACE) == (GDRAM, SRAM)


class PtrType(types.Type):
    """numba type of a pointer to elements of one kind."""

    def __init__(self, kind: str):
        self.kind = kind
        self.array_type = types.Array(from_dtype(ELEMENT_TYPES[kind].storage), 1, "C")
        super().__init__(name=f"bang.Ptr[{kind}]")


_PTR_TYPES = {kind: PtrType(kind) for kind in ELEMENT_TYPES}


@register_model(PtrType)
class _PtrModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = [("base", fe_type.array_type), ("offset", types.intp), ("space", types.int64),
                   ("name", types.unicode_type), ("log", types.intp)]
        super().__init__(dmm, fe_type, members)


for _field in ("base", "offset", "space", "name", "log"):
    make_attribute_wrapper(PtrType, _field, _field)


class Ptr:
    """A typed pointer (`T *` in BANG C). `p + k` / `p - k` move it; `p[i]` reads or writes one element."""

    __slots__ = ("base", "offset", "space", "name", "etype", "log")

    def __init__(self, base: np.ndarray, offset: int, space: int, name: str, etype: ElementType, log: int = 0):
        self.base = base
        self.offset = int(offset)
        self.space = int(space)
        self.name = name
        self.etype = etype
        self.log = int(log)

    def __add__(self, count: int) -> "Ptr":
        return Ptr(self.base, self.offset + int(count), self.space, self.name, self.etype, self.log)

    def __sub__(self, count: int) -> "Ptr":
        return Ptr(self.base, self.offset - int(count), self.space, self.name, self.etype, self.log)

    def logged(self, log: int) -> "Ptr":
        """This pointer, with its element accesses recorded in the state row at address `log`."""
        return Ptr(self.base, self.offset, self.space, self.name, self.etype, log)

    def __getitem__(self, index: int):
        return ptr_load(self, index)

    def __setitem__(self, index: int, value) -> None:
        ptr_store(self, index, value)

    def __repr__(self) -> str:
        return (f"<bang {self.etype.kind} *{self.name} + {self.offset} in {SPACE_NAMES[self.space]} "
                f"({self.base.size} elements)>")


def _rebuild(base, offset, space, name, kind, log):
    return Ptr(base, offset, space, name, ELEMENT_TYPES[kind], log)


@typeof_impl.register(Ptr)
def _typeof_ptr(value, context):
    return _PTR_TYPES[value.etype.kind]


@unbox(PtrType)
def _unbox_ptr(typ, obj, c):
    ptr = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    fields = (("base", typ.array_type), ("offset", types.intp), ("space", types.int64), ("name", types.unicode_type),
              ("log", types.intp))
    failed = cgutils.false_bit
    for field, field_type in fields:
        attr = c.pyapi.object_getattr_string(obj, field)
        native = c.unbox(field_type, attr)
        c.pyapi.decref(attr)
        setattr(ptr, field, native.value)
        failed = c.builder.or_(failed, native.is_error)
    return NativeValue(ptr._getvalue(), is_error=failed)


@box(PtrType)
def _box_ptr(typ, val, c):
    ptr = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    rebuild = c.pyapi.unserialize(c.pyapi.serialize_object(_rebuild))
    base = c.box(typ.array_type, ptr.base)
    offset = c.box(types.intp, ptr.offset)
    space = c.box(types.int64, ptr.space)
    name = c.box(types.unicode_type, ptr.name)
    kind = c.pyapi.unserialize(c.pyapi.serialize_object(typ.kind))
    log = c.box(types.intp, ptr.log)
    result = c.pyapi.call_function_objargs(rebuild, (base, offset, space, name, kind, log))
    for obj in (rebuild, base, offset, space, name, kind, log):
        c.pyapi.decref(obj)
    return result


@intrinsic
def make_ptr(typingctx, base, offset, space, name, etype, log):
    """A Ptr from its fields (compiled code)."""
    if not isinstance(etype, ElementTypeToken):
        return None
    result = _PTR_TYPES[etype.kind]
    signature = result(base, offset, space, name, etype, log)

    def codegen(context, builder, sig, args):
        ptr = cgutils.create_struct_proxy(result)(context, builder)
        ptr.base = args[0]
        ptr.offset = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr.space = context.cast(builder, args[2], sig.args[2], types.int64)
        ptr.name = args[3]
        ptr.log = context.cast(builder, args[5], sig.args[5], types.intp)
        context.nrt.incref(builder, sig.args[0], args[0])
        context.nrt.incref(builder, sig.args[3], args[3])
        return ptr._getvalue()

    return signature, codegen


@intrinsic
def _moved(typingctx, ptr, delta):
    """`ptr` moved by `delta` elements."""
    if not isinstance(ptr, PtrType) or not isinstance(delta, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        src = cgutils.create_struct_proxy(ptr)(context, builder, value=args[0])
        out = cgutils.create_struct_proxy(ptr)(context, builder)
        out.base, out.space, out.name, out.log = src.base, src.space, src.name, src.log
        out.offset = builder.add(src.offset, context.cast(builder, args[1], sig.args[1], types.intp))
        context.nrt.incref(builder, ptr, args[0])
        return out._getvalue()

    return ptr(ptr, delta), codegen


@overload(operator.add)
def _ptr_add(ptr, delta):
    if isinstance(ptr, PtrType) and isinstance(delta, types.Integer):
        return lambda ptr, delta: _moved(ptr, delta)


@overload(operator.sub)
def _ptr_sub(ptr, delta):
    if isinstance(ptr, PtrType) and isinstance(delta, types.Integer):
        return lambda ptr, delta: _moved(ptr, -delta)


# ---- element access ----------------------------------------------------------------------------------------------

def get(ptr, values, index):
    """values[index] as float32 (float kinds) or int64 (integer kinds); `values` holds ptr's element kind."""


def put(ptr, values, index, value):
    """values[index] = value rounded to ptr's element kind; `values` holds ptr's element kind."""


@overload(get, inline="always")
def _get(ptr, values, index):
    if ptr.kind == "half":
        return lambda ptr, values, index: half_to_f32(values[index])
    if ptr.kind == "bfloat16":
        return lambda ptr, values, index: bfloat16_to_f32(values[index])
    if ptr.kind == "float32":
        return lambda ptr, values, index: values[index]
    return lambda ptr, values, index: np.int64(values[index])


@overload(put, inline="always")
def _put(ptr, values, index, value):
    if ptr.kind == "half":
        def impl(ptr, values, index, value):
            values[index] = f32_to_half(value)
    elif ptr.kind == "bfloat16":
        def impl(ptr, values, index, value):
            values[index] = f32_to_bfloat16(value)
    elif ptr.kind == "float32":
        def impl(ptr, values, index, value):
            values[index] = np.float32(value)
    else:
        storage = ELEMENT_TYPES[ptr.kind].storage.type

        def impl(ptr, values, index, value):
            values[index] = storage(np.int64(value))
    return impl


@register_jitable
def span(ptr, count):
    """The `count` stored elements at ptr as an array view (unchecked: call check_range first)."""
    return ptr.base[ptr.offset:ptr.offset + count]


@register_jitable
def load(ptr, index):
    """Element `index` of `ptr` as float32 or int64; unchecked."""
    return get(ptr, ptr.base, ptr.offset + index)


@register_jitable
def store(ptr, index, value):
    """Write `value` (rounded to the element type) at `ptr[index]`; unchecked."""
    put(ptr, ptr.base, ptr.offset + index, value)


def kind_name(ptr):
    """The element kind of `ptr` as a string (compile-time constant)."""


@overload(kind_name)
def _kind_name(ptr):
    name = ptr.kind
    return lambda ptr: name


def itemsize(ptr):
    """Bytes per element of `ptr`."""


@overload(itemsize)
def _itemsize(ptr):
    size = ELEMENT_TYPES[ptr.kind].itemsize
    return lambda ptr: size


def is_float(ptr):
    """Whether `ptr` points to a floating-point kind."""


@overload(is_float)
def _is_float(ptr):
    value = ELEMENT_TYPES[ptr.kind].is_float
    return lambda ptr: value


# ---- checks ------------------------------------------------------------------------------------------------------

@register_jitable
def check_range(ptr, count, what):
    """Trap unless elements [ptr.offset, ptr.offset + count) lie inside the allocation `ptr` points into."""
    size = ptr.base.shape[0]
    if count < 0:
        raise KernelTrap(what + ": negative element count " + str(count))
    if ptr.offset < 0 or ptr.offset + count > size:
        detail = " (negative offset)" if ptr.offset < 0 else ""
        raise KernelTrap(what + ": elements [" + str(ptr.offset) + ", " + str(ptr.offset + count) + ") of "
                         + SPACE_NAMES[ptr.space] + " buffer '" + ptr.name + "' are outside its "
                         + str(size) + " " + kind_name(ptr) + " elements" + detail)


@register_jitable
def check_space(ptr, space, what):
    """Trap unless `ptr` points into memory space `space`."""
    if ptr.space != space:
        raise KernelTrap(what + " needs an " + SPACE_NAMES[space] + " buffer, but '" + ptr.name + "' is in "
                         + SPACE_NAMES[ptr.space])


@register_jitable
def address(ptr):
    """The host address of ptr's current element (valid after check_range)."""
    return ptr.base.ctypes.data + ptr.offset * itemsize(ptr)


@register_jitable
def note_element(ptr, index, write):
    """Record an element access for the sanitizer when ptr's accesses are recorded (after check_range)."""
    if ptr.log != 0:
        size = itemsize(ptr)
        accesslog.note(ptr.log, address(ptr) + index * size, size, ptr.space, write)


@jit
def ptr_load(ptr, index):
    """`ptr[index]`, checked (scalar read of any memory space)."""
    check_range(ptr + index, 1, "read")
    note_element(ptr, index, False)
    return load(ptr, index)


@jit
def ptr_store(ptr, index, value):
    """`ptr[index] = value`, checked (scalar write of any memory space)."""
    check_range(ptr + index, 1, "write")
    note_element(ptr, index, True)
    store(ptr, index, value)


@overload(operator.getitem)
def _ptr_getitem(ptr, index):
    if isinstance(ptr, PtrType) and isinstance(index, types.Integer):
        def impl(ptr, index):
            check_range(ptr + index, 1, "read")
            note_element(ptr, index, False)
            return load(ptr, index)
        return impl


@overload(operator.setitem)
def _ptr_setitem(ptr, index, value):
    if isinstance(ptr, PtrType) and isinstance(index, types.Integer):
        def impl(ptr, index, value):
            check_range(ptr + index, 1, "write")
            note_element(ptr, index, True)
            store(ptr, index, value)
        return impl
