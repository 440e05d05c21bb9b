"""Our C headers, read: the declarations cffi builds from, and every function with its parameters' names and C types.

The headers in `include/` are the single source of truth for the C ABI. This module turns them into
- the cffi declarations of one library (its own types and functions, plus the types of the headers it includes),
- a `Function` per declared function: name, return type and (name, `CType`) per parameter, which drives the
  generic marshalling in `marshal.py`.
It runs when the libraries are built (the result is stored in the built library) and in the tests; it needs
pycparser, which cffi depends on.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

INCLUDE_DIR = Path(__file__).resolve().parent / "include"

#: library -> (its headers, the libraries whose types it uses)
LIBRARIES = {
    "cnrt": (("cnrt.h", "mlusim.h"), ()),
    "cnnl": (("cnnl.h",), ("cnrt",)),
    "cncl": (("cncl.h",), ("cnrt",)),
    "cndev": (("cndev.h",), ()),
    "cndrv": (("cn_api.h",), ()),
}

#: The name prefix of the Python callback behind each exported C function (see build.py).
CALLBACK_PREFIX = "_mlusim_py_"

#: Tokens of our headers that only matter to C compilers (calling-convention / export macros).
_API_MACROS = ("CNNL_WIN_API", "CNRT_API", "CNCL_API", "MLUSIM_API")

_STANDARD_TYPES = {
    "size_t": "unsigned long", "ssize_t": "long", "uintptr_t": "unsigned long", "intptr_t": "long",
    "int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
    "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
    "bool": "_Bool",
}
_INTEGER_WORDS = {"char", "signed", "unsigned", "short", "int", "long"}
_FLOAT_WORDS = {"float", "double"}


@dataclass(frozen=True)
class CType:
    """A parameter or return type, reduced to what marshalling needs.

    `base` is the innermost named type after resolving typedefs of pointers to complete structs
    (`cnclCliqueId_t` is `struct cnclCliqueId` with one more pointer level); `pointers` counts pointer and array
    levels above it; `const_base` says whether the innermost type is const; `category` classifies the base:
    'void', 'integer' (enums included), 'bool', 'float', 'handle' (a typedef of a pointer to an opaque struct),
    'struct', 'function' (a typedef of a function pointer). `spelling` is the type as the header writes it.
    """

    spelling: str
    base: str
    pointers: int
    const_base: bool
    category: str

    def as_tuple(self) -> tuple:
        return (self.spelling, self.base, self.pointers, self.const_base, self.category)

    @property
    def passed_as_address(self) -> bool:
        """Pointers, handles and function pointers cross into Python as integers (intptr_t): see build.py."""
        return self.pointers > 0 or self.category in ("handle", "function")

    @classmethod
    def from_tuple(cls, values) -> "CType":
        return cls(*values)


@dataclass(frozen=True)
class Function:
    """One declared C function."""

    name: str
    result: CType
    params: tuple  # ((name, CType), ...)

    def as_tuple(self) -> tuple:
        return (self.name, self.result.as_tuple(), tuple((n, t.as_tuple()) for n, t in self.params))

    @classmethod
    def from_tuple(cls, values) -> "Function":
        name, result, params = values
        return cls(name, CType.from_tuple(result), tuple((n, CType.from_tuple(t)) for n, t in params))


@dataclass(frozen=True)
class Header:
    """One header, read: its integer macros, enum constants, type declarations and functions."""

    name: str
    macros: dict
    enums: dict
    type_decls: str
    functions: tuple
    function_decls: tuple  # (name, declaration text) per function


def header_text(name: str) -> str:
    return (INCLUDE_DIR / name).read_text()


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _integer_macros(text: str, known: dict) -> dict:
    """`#define NAME <integer expression over earlier macros>`, evaluated."""
    macros = {}
    for name, body in re.findall(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+)$", text, flags=re.M):
        expression = body.strip()
        if not re.fullmatch(r"[\w\s()+\-*/<>|&~]+", expression):
            continue
        try:
            value = eval(expression, {"__builtins__": {}}, {**known, **macros})  # noqa: S307 (our own headers)
        except Exception:
            continue
        if isinstance(value, int) and not isinstance(value, bool):
            macros[name] = value
    return macros


def header_macros(name: str, known: Optional[dict] = None) -> dict:
    """The integer macros of one header (version numbers, sizes), without parsing its declarations."""
    return _integer_macros(_strip_comments(header_text(name)), dict(known or {}))


def _declarations(text: str, macros: dict) -> str:
    """The header without comments, preprocessor lines, extern "C" braces and export macros, with integer macros
    substituted: plain C declarations."""
    text = re.sub(r"#\s*ifdef\s+__cplusplus\s*extern\s+\"C\"\s*\{\s*#\s*endif[^\n]*", "", text)
    text = re.sub(r"#\s*ifdef\s+__cplusplus\s*\}\s*#\s*endif[^\n]*", "", text)
    text = re.sub(r"^[ \t]*#.*?(?<!\\)$", "", text, flags=re.M | re.S)
    for token in _API_MACROS:
        text = re.sub(rf"\b{token}\b", "", text)
    for name, value in macros.items():
        text = re.sub(rf"\b{name}\b", str(value), text)
    return text


def _pycparser():
    from pycparser import c_ast, c_generator, c_parser
    return c_ast, c_generator.CGenerator(), c_parser.CParser()


class _Types:
    """Typedef and struct tables, for classifying parameter types."""

    def __init__(self):
        self.typedefs: dict = {}
        self.complete_structs: set = set()

    def add(self, node, c_ast) -> None:
        if isinstance(node, c_ast.Typedef):
            self.typedefs[node.name] = node.type
        inner = node.type
        while isinstance(inner, (c_ast.TypeDecl, c_ast.PtrDecl, c_ast.ArrayDecl)):
            inner = inner.type
        if isinstance(inner, (c_ast.Struct, c_ast.Union)) and inner.decls is not None and inner.name:
            self.complete_structs.add(inner.name)

    def classify(self, node, c_ast, generator) -> tuple:
        """(base, extra pointer levels, const_base, category) of a TypeDecl's type, resolving typedefs."""
        inner = node.type
        const = "const" in (node.quals or [])
        if isinstance(inner, (c_ast.Struct, c_ast.Union)):  # unions marshal as structs (cffi reads either)
            return f"{_tag_keyword(inner, c_ast)} {inner.name}", 0, const, "struct"
        if isinstance(inner, c_ast.Enum):
            return f"enum {inner.name}", 0, const, "integer"
        names = inner.names
        if len(names) == 1 and names[0] in self.typedefs:
            return self._typedef(names[0], c_ast, const)
        words = set(" ".join(names).replace("_Bool", "bool").split())
        if words == {"void"}:
            category = "void"
        elif words == {"bool"}:
            category = "bool"
        elif words & _FLOAT_WORDS:
            category = "float"
        elif words <= _INTEGER_WORDS or (len(names) == 1 and names[0] in _STANDARD_TYPES):
            category = "bool" if names == ["bool"] else "integer"
        else:
            raise ValueError(f"unknown C type {' '.join(names)!r}")
        return " ".join(names), 0, const, category

    def _typedef(self, name: str, c_ast, const: bool) -> tuple:
        target = self.typedefs[name]
        if isinstance(target, c_ast.TypeDecl):
            inner = target.type
            if isinstance(inner, c_ast.Enum):
                return name, 0, const, "integer"
            if isinstance(inner, (c_ast.Struct, c_ast.Union)):
                return name, 0, const, "struct"
            if isinstance(inner, c_ast.IdentifierType) and len(inner.names) == 1 and inner.names[0] in self.typedefs:
                base, extra, _, category = self._typedef(inner.names[0], c_ast, const)
                return (name if extra == 0 else base), extra, const, category
            words = set(inner.names)
            category = "float" if words & _FLOAT_WORDS else ("bool" if inner.names in (["bool"], ["_Bool"])
                                                             else "integer")
            return name, 0, const, category
        if isinstance(target, c_ast.PtrDecl):
            pointee = target.type
            if isinstance(pointee, c_ast.FuncDecl):
                return name, 0, const, "function"
            if isinstance(pointee, c_ast.TypeDecl) and isinstance(pointee.type, c_ast.Struct):
                tag = pointee.type.name
                if tag in self.complete_structs:  # e.g. cnclCliqueId_t: a pointer to a struct the caller fills
                    return f"struct {tag}", 1, "const" in (pointee.quals or []), "struct"
                return name, 0, const, "handle"
        raise ValueError(f"typedef {name} is of a kind the C ABI does not marshal")


def _tag_keyword(node, c_ast) -> str:
    return "union" if isinstance(node, c_ast.Union) else "struct"


def _ctype(node, types: _Types, c_ast, generator) -> CType:
    spelling = generator.visit(c_ast.Typename(name=None, quals=[], align=None, type=_strip_name(node, c_ast)))
    pointers = 0
    current = node
    while isinstance(current, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        pointers += 1
        current = current.type
    if not isinstance(current, c_ast.TypeDecl):
        raise ValueError(f"unsupported declarator {spelling!r}")
    base, extra, const, category = types.classify(current, c_ast, generator)
    return CType(" ".join(spelling.split()), base, pointers + extra, const, category)


def _strip_name(node, c_ast):
    """A copy of a declarator without its identifier and with arrays as pointers (a parameter's `int dims[]` is
    an `int *`): the spelling cffi casts to."""
    if isinstance(node, c_ast.ArrayDecl):
        return c_ast.PtrDecl(quals=list(node.dim_quals or []), type=_strip_name(node.type, c_ast))
    if isinstance(node, c_ast.PtrDecl):
        return c_ast.PtrDecl(quals=list(node.quals or []), type=_strip_name(node.type, c_ast))
    if isinstance(node, c_ast.TypeDecl):
        return c_ast.TypeDecl(declname=None, quals=list(node.quals or []), align=node.align, type=node.type)
    return node


def _preamble() -> str:
    return "".join(f"typedef {c} {name};\n" for name, c in _STANDARD_TYPES.items())


def read_header(name: str, known_macros: Optional[dict] = None, known_decls: str = "") -> Header:
    """Parse one header; `known_decls` are the declarations of the headers it includes."""
    c_ast, generator, parser = _pycparser()
    raw = _strip_comments(header_text(name))
    macros = _integer_macros(raw, dict(known_macros or {}))
    body = _declarations(raw, {**(known_macros or {}), **macros})
    preamble = _preamble() + known_decls
    ast = parser.parse(preamble + "\n" + body, filename=name)
    skip = len(parser.parse(preamble, filename=name).ext)
    types = _Types()
    for node in ast.ext:
        types.add(node, c_ast)
    enums: dict = {}
    type_decls: list = []
    functions: list = []
    function_decls: list = []
    for node in ast.ext[skip:]:
        if isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            functions.append(_function(node, types, c_ast, generator))
            function_decls.append((node.name, generator.visit(node) + ";"))
            continue
        type_decls.append(generator.visit(node) + ";")
        enum = _enum_of(node, c_ast)
        if enum is not None:
            enums.update(_enum_values(enum, {**(known_macros or {}), **macros}, enums, generator))
    return Header(name, macros, enums, "\n".join(type_decls), tuple(functions), tuple(function_decls))


def _enum_of(node, c_ast):
    inner = node.type
    while isinstance(inner, (c_ast.TypeDecl,)):
        inner = inner.type
    return inner if isinstance(inner, c_ast.Enum) and inner.values is not None else None


def _enum_values(enum, macros: dict, known: dict, generator) -> dict:
    values, following = {}, 0
    for enumerator in enum.values.enumerators:
        if enumerator.value is not None:
            text = generator.visit(enumerator.value)
            following = eval(text, {"__builtins__": {}}, {**macros, **known, **values})  # noqa: S307
        values[enumerator.name] = following
        following += 1
    return values


def _function(node, types: _Types, c_ast, generator) -> Function:
    declaration = node.type
    params = []
    for index, param in enumerate(declaration.args.params if declaration.args else ()):
        if isinstance(param, c_ast.EllipsisParam):
            raise ValueError(f"{node.name}: variadic functions are not marshalled")
        ctype = _ctype(param.type, types, c_ast, generator)
        if ctype.category == "void" and ctype.pointers == 0:
            continue  # f(void)
        if not param.name:
            raise ValueError(f"{node.name}: parameter {index} has no name (the marshalling matches names)")
        params.append((param.name, ctype))
    return Function(node.name, _ctype(declaration.type, types, c_ast, generator), tuple(params))


@dataclass(frozen=True)
class Library:
    """What one shared library declares: the declarations of the types it uses from included headers, its own
    types, its functions (parsed, and as declaration text) and the enum constants and macros of its headers."""

    name: str
    headers: tuple
    included_decls: str
    own_types: str
    functions: tuple
    function_decls: dict  # name -> declaration text
    enums: dict
    macros: dict

    @property
    def own_decls(self) -> str:
        """Its types and function declarations: what a cffi FFI needs to describe the library's API."""
        return self.own_types + "\n".join(self.function_decls.values()) + "\n"


def read_library(name: str) -> Library:
    """Parse the headers of one library (and, for their types, the headers of the libraries it depends on)."""
    headers, depends = LIBRARIES[name]
    included, macros = "", {}
    for dependency in depends:
        for header in LIBRARIES[dependency][0]:
            read = read_header(header, macros, included)
            included += read.type_decls + "\n"
            macros.update(read.macros)
    own_types, own_functions, function_decls, enums, own_macros = "", [], {}, {}, {}
    for header in headers:
        read = read_header(header, macros, included + own_types)
        own_types += read.type_decls + "\n"
        own_functions.extend(read.functions)
        function_decls.update(read.function_decls)
        enums.update(read.enums)
        own_macros.update(read.macros)
        macros.update(read.macros)
    return Library(name, headers, included, own_types, tuple(own_functions), function_decls, enums, own_macros)
