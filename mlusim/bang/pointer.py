"""Typed pointers into the simulated memory spaces (GDRAM, NRAM, WRAM, SRAM), usable in Python and compiled code.

A `Ptr` is (base, offset, space, name): `base` is the whole typed allocation it points into (a GDRAM block or one
on-chip buffer), `offset` an element offset that pointer arithmetic moves (`p + 4`, `p - 4`) freely, even outside
the allocation; only an access checks that [offset, offset + count) lies inside `base`, so a negative offset is
caught and reported as such. Half and bfloat16 are stored as uint16 bits (see dtypes). `log` is the address of the
state row that records the pointer's element accesses for the sanitizer (mlusim.bang.accesslog), 0 when none does.

Every check is overflow-proof: pointer arithmetic saturates at the int64 limits instead of wrapping (so a huge
offset can never wrap back into a buffer), and the range checks compare without forming sums that could overflow.
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba import from_dtype
from numba.extending import (NativeValue, box, intrinsic, make_attribute_wrapper, models, overload,
                             register_jitable, register_model, typeof_impl, unbox)

from . import accesslog
from .caching import jit
from ..numerics.float16 import bfloat16_to_f32, f32_to_bfloat16, f32_to_half, half_to_f32
from .dtypes import ELEMENT_TYPES, ElementType, ElementTypeToken
from .cancel import poll
from .faults import KernelTrap

GDRAM, NRAM, WRAM, SRAM, LDRAM = 0, 1, 2, 3, 4
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
#: No buffer and no byte offset comes near this (2^62): sizes and products beyond it are out of range by definition.
BOUND = 2**62


def clamp64(value: int) -> int:
    """A Python int saturated to the int64 range (pointer arithmetic of plain-Python kernel code)."""
    return INT64_MAX if value > INT64_MAX else INT64_MIN if value < INT64_MIN else value
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
        return Ptr(self.base, clamp64(self.offset + int(count)), self.space, self.name, self.etype, self.log)

    def __sub__(self, count: int) -> "Ptr":
        return Ptr(self.base, clamp64(self.offset - int(count)), self.space, self.name, self.etype, self.log)

    def logged(self, log: int) -> "Ptr":
        """This pointer, with its element accesses recorded in the state row at address `log`."""
        return Ptr(self.base, self.offset, self.space, self.name, self.etype, log)

    def __getitem__(self, index: int):
        return ptr_load(self, clamp64(int(index)))

    def __setitem__(self, index: int, value) -> None:
        ptr_store(self, clamp64(int(index)), value)

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


def _saturating(builder, operation: str, left, right):
    """left + right or left - right on int64, saturated at the int64 limits (llvm.sadd.sat / llvm.ssub.sat)."""
    i64 = ir.IntType(64)
    function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, (i64, i64)),
                                              f"llvm.{operation}.sat.i64")
    return builder.call(function, (left, right))


def _as_int64(context, builder, value, value_type):
    """An integer argument as int64; an unsigned one above the int64 range saturates instead of turning negative."""
    if value_type.signed or value_type.bitwidth < 64:
        return context.cast(builder, value, value_type, types.int64)
    value = context.cast(builder, value, value_type, types.uint64)
    limit = ir.Constant(ir.IntType(64), INT64_MAX)
    return builder.select(builder.icmp_unsigned(">", value, limit), limit, value)


def _moving(operation: str):
    @intrinsic
    def moved(typingctx, ptr, delta):
        if not isinstance(ptr, PtrType) or not isinstance(delta, types.Integer):
            return None

        def codegen(context, builder, sig, args):
            src = cgutils.create_struct_proxy(ptr)(context, builder, value=args[0])
            out = cgutils.create_struct_proxy(ptr)(context, builder)
            out.base, out.space, out.name, out.log = src.base, src.space, src.name, src.log
            out.offset = _saturating(builder, operation, src.offset, _as_int64(context, builder, args[1], sig.args[1]))
            context.nrt.incref(builder, ptr, args[0])
            return out._getvalue()

        return ptr(ptr, delta), codegen
    return moved


_moved = _moving("sadd")       # `ptr` moved forward by `delta` elements (saturating)
_moved_back = _moving("ssub")  # `ptr` moved back by `delta` elements (saturating)


@overload(operator.add)
def _ptr_add(ptr, delta):
    if isinstance(ptr, PtrType) and isinstance(delta, types.Integer):
        return lambda ptr, delta: _moved(ptr, delta)


@overload(operator.sub)
def _ptr_sub(ptr, delta):
    if isinstance(ptr, PtrType) and isinstance(delta, types.Integer):
        return lambda ptr, delta: _moved_back(ptr, delta)


# ---- element access ----------------------------------------------------------------------------------------------

def get(ptr, values, index):
    """values[index] as float32 (float kinds) or int64 (integer kinds); `values` holds ptr's element kind."""


def put(ptr, values, index, value):
    """values[index] = value rounded to ptr's element kind; `values` holds ptr's element kind."""


def _not_pointer(ptr, what: str = "") -> None:
    """Raise numba's typing error with a message a kernel writer can act on, when `ptr` is not a bang pointer."""
    if not isinstance(ptr, PtrType):
        raise TypingError(f"[bang] {what or 'an intrinsic'}: expected a bang pointer (a buffer from bang.nram/wram/"
                          f"sram or a bang.gdram parameter), got {types.unliteral(ptr)}")


def require_pointer(ptr, what):
    """Compile-time check that `ptr` is a bang pointer (`what` names the operand in the error)."""


@overload(require_pointer, inline="always")
def _require_pointer(ptr, what):
    _not_pointer(ptr, getattr(what, "literal_value", ""))
    return lambda ptr, what: None


@overload(get, inline="always")
def _get(ptr, values, index):
    _not_pointer(ptr)
    if ptr.kind == "half":
        return lambda ptr, values, index: half_to_f32(values[index])
    if ptr.kind == "bfloat16":
        return lambda ptr, values, index: bfloat16_to_f32(values[index])
    if ptr.kind == "float32":
        return lambda ptr, values, index: values[index]
    return lambda ptr, values, index: np.int64(values[index])


@overload(put, inline="always")
def _put(ptr, values, index, value):
    _not_pointer(ptr)
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
    _not_pointer(ptr)
    name = ptr.kind
    return lambda ptr: name


def itemsize(ptr):
    """Bytes per element of `ptr`."""


@overload(itemsize)
def _itemsize(ptr):
    _not_pointer(ptr)
    size = ELEMENT_TYPES[ptr.kind].itemsize
    return lambda ptr: size


def is_float(ptr):
    """Whether `ptr` points to a floating-point kind."""


@overload(is_float)
def _is_float(ptr):
    _not_pointer(ptr)
    value = ELEMENT_TYPES[ptr.kind].is_float
    return lambda ptr: value


# ---- checks ------------------------------------------------------------------------------------------------------

@register_jitable
def text(value):
    """str() of an integer for trap messages (numba's str() of the most negative int64 does not end)."""
    if value == INT64_MIN:
        return "-9223372036854775808"
    return str(value)


@register_jitable
def bounded_mul(a, b):
    """a * b when |a * b| <= BOUND, else a value beyond BOUND with the product's sign (never a wrapped product)."""
    if a == 0 or b == 0:
        return np.int64(0)
    if a > BOUND or a < -BOUND or b > BOUND or b < -BOUND:
        big = True
    else:
        big = abs(a) > BOUND // abs(b)
    if big:
        return np.int64(BOUND + 1) if (a < 0) == (b < 0) else np.int64(-BOUND - 1)
    return np.int64(a) * np.int64(b)


# The checks are inlined into every intrinsic; the messages of their traps are built out of line (one compiled
# function each), which keeps the intrinsics small and quick to compile.

@jit
def range_trap(what, count, offset, space, name, size, kind):
    """Raise the trap of an access outside its buffer."""
    if count < 0:
        raise KernelTrap(what + ": negative element count " + text(count))
    detail = " (negative offset)" if offset < 0 else ""
    raise KernelTrap(what + ": " + text(count) + " element(s) from element " + text(offset) + " of "
                     + SPACE_NAMES[space] + " buffer '" + name + "' are outside its " + text(size) + " " + kind
                     + " elements" + detail)


@jit
def space_trap(what, wanted, space, name):
    raise KernelTrap(what + " needs an " + SPACE_NAMES[wanted] + " buffer, but '" + name + "' is in "
                     + SPACE_NAMES[space])


@register_jitable
def check_range(ptr, count, what):
    """Trap unless elements [ptr.offset, ptr.offset + count) lie inside the allocation `ptr` points into (compared
    without forming the sum, which could overflow). Also where a stopped launch's tasks stop (cancel.poll)."""
    require_pointer(ptr, what)
    poll()
    size = ptr.base.shape[0]
    offset = ptr.offset
    if count < 0 or offset < 0 or offset > size or count > size - offset:
        range_trap(what, count, offset, ptr.space, ptr.name, size, kind_name(ptr))


@register_jitable
def check_space(ptr, space, what):
    """Trap unless `ptr` points into memory space `space`."""
    require_pointer(ptr, what)
    if ptr.space != space:
        space_trap(what, space, ptr.space, ptr.name)


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
