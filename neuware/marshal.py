"""Generic marshalling: one C declaration + its Python function + its annotations -> the Python function cffi calls.

`bind` checks the three against each other (every Python parameter comes from a C parameter, every C parameter goes
somewhere) and `generate` compiles a straight-line wrapper (pointers and handles arrive as integers):

    def cnnlGetTensorDescriptor(c_desc, c_layout, c_dtype, c_dimNb, c_dims):
        try:
            if not c_layout: raise _null('layout')
            ...
            a_desc = _handle(c_desc)
            _r = _py(a_desc)
            ...
            _ffi.cast(_ptr0, c_layout)[0] = _r[0]
            ...
            return 0
        except BaseException as _e:
            _code = _fail(_e)
            return _code

`helpers.Helpers` holds what the generated code calls, bound to one library's ffi.
"""
from __future__ import annotations

import dataclasses
import inspect
import itertools
from typing import Any, Callable, Optional

from . import failures
from .cdecl import CType, Function
from .helpers import Helpers
from .kinds import BindingError, Deref, HandleIn, Kind, Seq, default_kind


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

    def __init__(self, ffi, namespace: dict, ctypes: dict):
        self.ffi = ffi
        self.namespace = namespace
        self.ctypes = ctypes  # param -> CType
        self.pre: list = []
        self.post: list = []
        self._numbers = itertools.count()
        self._pointer_types: dict = {}

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

    def pointer_type(self, ctype: CType) -> str:
        """The name of the cffi type 'pointer to the base type' of `ctype` (`int *` for `int dims[]`)."""
        key = ctype.base
        if key not in self._pointer_types:
            self._pointer_types[key] = self.bind(self.ffi.typeof(f"{ctype.base} *"), "ptr")
        return self._pointer_types[key]


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


def generate(binding: Binding, helpers: Helpers, family: failures.Family) -> Callable:
    """Compile the wrapper of one binding."""
    check(binding)
    function = binding.function
    namespace = dict(helpers.namespace)
    g = Gen(helpers.ffi, namespace, dict(function.params))
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
        _emit_release(g, function.name, p, kinds[p])
    success, failure = _returns(binding, family, g, bool(outputs))
    body = g.pre + g.post + [success]
    source = (f"def {function.name}({', '.join(g.c(p) for p in params)}):\n    try:\n"
              + "".join(f"        {line}\n" for line in body)
              + f"    except BaseException as _e:\n        _code = _fail(_e)\n        return {failure}\n")
    exec(compile(source, f"<neuware wrapper {function.name}>", "exec"), namespace)  # noqa: S102
    wrapper = namespace[function.name]
    wrapper.source = source
    return wrapper


def _emit_release(g: Gen, name: str, param: str, kind: Kind) -> None:
    """Forget the handles a destroy function destroyed: the handle, the handle at an address, or an array of them."""
    if isinstance(kind, HandleIn):
        g.post.append(f"_release({g.c(param)})")
    elif isinstance(kind, Deref):
        g.post.append(f"_release(_ffi.cast(_ADDRESSES, {g.c(param)})[0])")
    elif isinstance(kind, Seq):
        g.post.append(f"_release_each({g.c(param)}, len({g.a(param)}), {param!r})")
    else:
        raise BindingError(f"{name}: cannot release parameter {param!r} (not a handle, a handle's address or an "
                           f"array of handles)")


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
            return f"return _error_string(_r, {g.a(binding.error_string)})", "_ffi.NULL"
        if binding.transient:
            return "return _transient(_r)", "_ffi.NULL"
        return "return _cstr(_r)", "_ffi.NULL"
    if result.spelling == family.status_type:
        if has_outputs:
            return "return 0", "_code"
        return "return 0 if _r is None else _status(_r)", "_code"
    if result.pointers == 0 and result.category in ("integer", "float", "bool"):
        return "return _r", "0"
    raise BindingError(f"{binding.function.name}: cannot return {result.spelling!r}")


def bind(function: Function, python: Callable, annotations: Optional[dict] = None, destroys=(),
         error_string: Optional[str] = None, transient: bool = False) -> Binding:
    """A checked Binding (raises BindingError when the declaration, function and annotations disagree)."""
    kinds = resolve_kinds(function, dict(annotations or {}))
    if isinstance(destroys, str):
        destroys = (destroys,)
    binding = Binding(function, python, kinds, tuple(destroys), error_string, transient)
    check(binding)
    return binding


__all__ = ["Binding", "BindingError", "Helpers", "Kind", "bind", "generate"]
