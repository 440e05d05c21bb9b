"""Build libmagicmind_runtime.so (cffi's embedding mode) and libmagicmind.so (the build API's library name: no code
of its own, it depends on libmagicmind_runtime.so), once, into an on-disk cache.

Each function of include/mm_capi.h becomes a C shim with the header's prototype that calls a cffi `extern
"Python"` callback (`_mmsim_py_<name>`) with pointers as intptr_t; the embedded Python, at the first call, joins
the process's interpreter (a program also linking libcnrt.so shares it) or starts one, puts the site directories of
the Python that built it on sys.path and binds the callbacks to `magicmind.capi.bindings`. The cache key covers the
header, this module, the bindings, cffi's and Python's versions and those site directories.

    python -m magicmind.capi.build        # build (or find) the libraries, print their directory
"""
from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from mlusim.host import cembed

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
HEADER = INCLUDE_DIR / "mm_capi.h"
MODULE = "_mlusim_magicmind_capi"
LIBRARY = "magicmind_runtime"
COMPANION = "magicmind"

_INIT_CODE = """\
import site as _site
import sys as _sys
for _directory in {site_dirs!r}:
    if _directory not in _sys.path:
        _site.addsitedir(_directory)
if {root!r} not in _sys.path:
    _sys.path.insert(0, {root!r})
from {module} import ffi, lib
from magicmind.capi import bindings as _bindings
_bindings.install(ffi, lib)
"""


def package_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def _declarations() -> tuple:
    """(typedef lines, [(result type, name, [(type, name), ...])]) of the header's functions."""
    text = re.sub(r"/\*.*?\*/", "", HEADER.read_text(), flags=re.S)
    body = text[text.index('extern "C" {') + len('extern "C" {'):text.rindex("#ifdef __cplusplus")]
    body = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    typedefs, functions = [], []
    for statement in (s.strip() for s in body.split(";")):
        statement = " ".join(statement.split())
        if not statement or statement.startswith("#"):
            continue
        if statement.startswith("typedef"):
            typedefs.append(statement + ";")
            continue
        match = re.match(r"(.+?)\s*\b(mmsim_\w+)\((.*)\)$", statement)
        if not match:
            raise ValueError(f"mm_capi.h: cannot read {statement!r}")
        result, name, params = match.groups()
        parsed = []
        if params.strip() != "void":
            for param in params.split(","):
                ptype, pname = re.match(r"(.+?)\s*(\w+)$", param.strip()).groups()
                parsed.append((ptype.strip(), pname))
        functions.append((result.strip(), name, parsed))
    return typedefs, functions


def _is_address(ctype: str) -> bool:
    return "*" in ctype or ctype.endswith("_fn") or ctype == "intptr_t"


def _callback(result: str, name: str, params: list) -> str:
    ret = "intptr_t" if _is_address(result) else result
    args = ", ".join(("intptr_t" if _is_address(t) else t) + f" {n}" for t, n in params) or "void"
    return f"{ret} _mmsim_py_{name}({args})"


def _shim(result: str, name: str, params: list) -> str:
    args = ", ".join(f"{t} {n}" for t, n in params) or "void"
    call = "_mmsim_py_" + name + "(" + ", ".join(f"(intptr_t){n}" if _is_address(t) else n for t, n in params) + ")"
    if _is_address(result):
        call = f"({result})" + call
    return f"{result} {name}({args}) {{ return {call}; }}"


def build_key() -> str:
    digest = hashlib.sha256()
    for path in (HEADER, Path(__file__), Path(__file__).parent / "bindings.py"):
        digest.update(path.read_bytes())
    cembed.add_build_environment(digest, package_root())
    return digest.hexdigest()[:16]


def library_dir() -> Path:
    return cembed.cache_root() / f"magicmind-py{sys.version_info.major}{sys.version_info.minor}-{build_key()}"


def _compile(out_dir: Path) -> None:
    typedefs, functions = _declarations()
    cdef = "\n".join(typedefs) + '\nextern "Python" {\n' + "\n".join(_callback(*f) + ";" for f in functions) + "\n}\n"
    source = ['#include "mm_capi.h"'] + [f"static {_callback(*f)};" for f in functions] + \
        [_shim(*f) for f in functions]
    init = _INIT_CODE.format(site_dirs=cembed.site_directories(), root=package_root(), module=MODULE)
    cembed.compile_embedded(MODULE, LIBRARY, cdef, "\n".join(source) + "\n", INCLUDE_DIR, init, out_dir)


def build_libraries(timeout: float = 600) -> Path:
    """The directory of libmagicmind_runtime.so and libmagicmind.so, built if missing (in a child process: cffi's
    compile changes the working directory). Safe to call from several processes at once."""
    directory = library_dir()
    names = (LIBRARY, COMPANION)
    if all((directory / f"lib{n}.so").exists() for n in names):
        return directory
    with cembed.locked(directory):
        if not (directory / f"lib{LIBRARY}.so").exists():
            done = subprocess.run([sys.executable, "-m", "magicmind.capi.build", "--one", str(directory)],
                                  cwd=package_root(), capture_output=True, text=True, timeout=timeout)
            if done.returncode:
                raise RuntimeError(f"building lib{LIBRARY}.so failed:\n{done.stdout}{done.stderr}")
        if not (directory / f"lib{COMPANION}.so").exists():
            cembed.link_companion(COMPANION, LIBRARY, directory)
    return directory


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--one"]:
        _compile(Path(args[1]))
        return 0
    print(build_libraries())
    return 0


if __name__ == "__main__":
    sys.exit(main())
