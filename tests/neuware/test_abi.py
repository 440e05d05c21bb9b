"""The C ABI covers the Python clones: every registered cnrt/cnnl/cncl API function is declared in the headers and
exported by its library, its declaration binds to the Python function, enum constants agree, handles of destroyed
objects are forgotten, and the headers compile on their own as C and C++."""
import re
import shutil
import subprocess

import cffi
import pytest

import cncl
import cndev
import cndrv
import cnnl
import cnrt
from neuware import bindings, build, cdecl, helpers, marshal

from .conftest import compiler

PACKAGES = {"cnrt": cnrt, "cnnl": cnnl, "cncl": cncl, "cndev": cndev, "cndrv": cndrv}

#: Registered Python API functions with no C counterpart, and why. (None today.)
NOT_IN_C: dict = {}

#: Functions that destroy or free something that is not a handle C holds, and why they release none.
RELEASE_NOTHING = {
    "cnrtDestroy": "v4 teardown: waits for the devices, destroys no handle",
    "cnrtFree": "device memory, not a handle",
    "cnrtFreeHost": "host memory, not a handle",
    "cnrtMemFreeAsync": "device memory, not a handle",
    "cnFree": "device memory, not a handle",
}


@pytest.fixture(scope="module")
def parsed():
    return {name: cdecl.read_library(name) for name in PACKAGES}


def c_names(package) -> set:
    api = package._api
    return {name for name in api.functions if re.match(api.prefix + "[A-Z]", name)}


@pytest.mark.parametrize("library", list(PACKAGES))
def test_every_python_api_function_is_declared_and_exported(library, parsed, library_dir):
    declared = {function.name for function in parsed[library].functions}
    registered = c_names(PACKAGES[library]) - set(NOT_IN_C)
    assert registered - declared == set(), "registered in Python but missing from the headers"
    extensions = {name for name, (_, owner) in bindings.EXTENSIONS.items() if owner == library}
    assert declared - registered - extensions == set(), "declared but implemented by nothing"
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    symbols = subprocess.run([nm, "-D", "--defined-only", str(library_dir / f"lib{library}.so")],
                             capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in symbols.splitlines() if " T " in line}
    assert declared - exported == set(), "declared but not exported"


@pytest.mark.parametrize("library", list(PACKAGES))
def test_every_declaration_binds_to_its_python_function(library, parsed):
    """Compile every wrapper (the libraries compile them lazily, at a function's first call)."""
    ffi = cffi.FFI()
    if parsed[library].included_decls.strip():
        ffi.cdef(parsed[library].included_decls)
    ffi.cdef(parsed[library].own_decls)
    family = bindings.family(library)
    helpers = marshal.Helpers(ffi, family)
    problems = []
    for function in parsed[library].functions:
        try:
            marshal.generate(bindings.binding(library, function), helpers, family)
        except marshal.BindingError as error:
            problems.append(str(error))
    assert problems == []


@pytest.mark.parametrize("library", list(PACKAGES))
def test_enum_constants_match_the_python_package(library, parsed):
    prefixes = {"cnrt": ("cnrt", "CNRT_"), "cnnl": ("CNNL_",), "cncl": ("cncl", "CNCL_"), "cndev": ("CNDEV_",),
                "cndrv": ("CN_",)}[library]
    header = {**parsed[library].enums, **parsed[library].macros}
    text = "".join(cdecl.header_text(h) for h in cdecl.LIBRARIES[library][0])
    for name in ("cnrtQueuePerThread", "cnrtQueueLegacy"):  # handle-valued macros: ((cnrtQueue_t)N)
        match = re.search(rf"#define {name} \(\(cnrtQueue_t\)(\d+)\)", text)
        if match:
            header[name] = int(match.group(1))
    constants = {name: value for name, value in vars(PACKAGES[library]).items()
                 if name.startswith(prefixes) and isinstance(value, int) and not isinstance(value, bool)}
    assert constants, "no constants found"
    missing = sorted(set(constants) - set(header))
    assert missing == []
    wrong = {name: (value, header[name]) for name, value in constants.items() if header[name] != value}
    assert wrong == {}


@pytest.mark.parametrize("library", list(PACKAGES))
def test_destroying_functions_release_their_handles(library, parsed):
    module = bindings.annotations_of(library)
    for function in parsed[library].functions:
        if re.search("Destroy|Free|Abort", function.name) and function.name not in RELEASE_NOTHING:
            assert function.name in module.DESTROYS, f"{function.name} destroys a handle but does not release it"


@pytest.mark.parametrize("cxx", [False, True])
@pytest.mark.parametrize("header", sorted(path.name for path in cdecl.INCLUDE_DIR.glob("*.h")))
def test_header_compiles_alone(header, cxx, tmp_path):
    source = tmp_path / ("use.cpp" if cxx else "use.c")
    source.write_text(f"#include <{header}>\n#include <{header}>\nint main(void) {{ return 0; }}\n")
    standard = "-std=c++11" if cxx else "-std=c99"
    result = subprocess.run([compiler(cxx), standard, "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                             f"-I{cdecl.INCLUDE_DIR}", str(source)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_cache_key_follows_the_headers(tmp_path, monkeypatch):
    key = build.build_key()
    copy = tmp_path / "include"
    shutil.copytree(cdecl.INCLUDE_DIR, copy)
    monkeypatch.setattr(cdecl, "INCLUDE_DIR", copy)
    assert build.build_key() == key
    (copy / "cnrt.h").write_text((copy / "cnrt.h").read_text() + "\n/* changed */\n")
    assert build.build_key() != key


def test_library_directory_is_cached(library_dir):
    assert build.build_libraries() == library_dir
    assert library_dir.name.startswith("py")


@pytest.mark.parametrize("c_type, make", [
    ("cnrtDeviceProp_t", lambda: cnrt.getDeviceProperties(0)),
    ("cnrtPointerAttributes_t", lambda: cnrt.pointerGetAttributes(0)),
    ("struct cnclCliqueId", lambda: cncl.getCliqueId()),
    *((name, (lambda make=make: (cndev.init(0), make())[1])) for name, make in (
        ("cndevCardInfo_t", cndev.getDeviceCount), ("cndevCardName_t", lambda: cndev.getCardName(0)),
        ("cndevMemoryInfoV2_t", lambda: cndev.getMemoryUsageV2(0)),
        ("cndevCardCoreCount_t", lambda: cndev.getCoreCount(0)),
        ("cndevCardClusterCount_t", lambda: cndev.getClusterCount(0)), ("cndevUUID_t", lambda: cndev.getUUID(0)),
        ("cndevPCIeInfoV2_t", lambda: cndev.getPCIeInfoV2(0)), ("cndevLibVersionInfo_t", cndev.getLibVersion),
        ("cndevVersionInfo_t", lambda: cndev.getVersionInfo(0)))),
], ids=lambda value: value if isinstance(value, str) else "")
def test_every_field_of_a_returned_struct_reaches_c(c_type, make, parsed):
    """Output structs are filled by field name: no field of the Python result may be left behind."""
    library = "cncl" if "cncl" in c_type else ("cndev" if c_type.startswith("cndev") else "cnrt")
    ffi = cffi.FFI()
    if parsed[library].included_decls.strip():
        ffi.cdef(parsed[library].included_decls)
    ffi.cdef(parsed[library].own_types)
    c_fields = {name.lower() for name, _ in ffi.typeof(c_type).fields}
    python_fields = set(helpers.attributes(make()))
    assert python_fields - c_fields == set()
