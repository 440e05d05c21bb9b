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

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
HEADER = INCLUDE_DIR / "mm_capi.h"
MODULE = "_mlusim_magicmind_capi"
LIBRARY = "magicmind_runtime"
COMPANION = "magicmind"
CACHE_ENV = "MLUSIM_CAPI_CACHE"

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


def site_directories() -> list:
    directories = []
    for path in list(site.getsitepackages()) + [site.getusersitepackages()]:
        if path and os.path.isdir(path) and os.path.abspath(path) not in directories:
            directories.append(os.path.abspath(path))
    return directories


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
    import cffi
    digest = hashlib.sha256()
    for path in (HEADER, Path(__file__), Path(__file__).parent / "bindings.py"):
        digest.update(path.read_bytes())
    digest.update(repr((cffi.__version__, sys.version, sysconfig.get_config_var("SOABI"), site_directories(),
                        package_root(), sys.executable)).encode())
    return digest.hexdigest()[:16]


def library_dir() -> Path:
    base = os.environ.get(CACHE_ENV) or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                      os.path.join(os.path.expanduser("~"), ".cache"), "mlusim", "capi")
    return Path(base) / f"magicmind-py{sys.version_info.major}{sys.version_info.minor}-{build_key()}"


def _compile(out_dir: Path) -> None:
    import cffi
    typedefs, functions = _declarations()
    ffi = cffi.FFI()
    ffi.embedding_api("")  # the exports are the shims
    ffi.cdef("\n".join(typedefs) + '\nextern "Python" {\n' +
             "\n".join(_callback(*f) + ";" for f in functions) + "\n}\n")
    source = ['#include "mm_capi.h"'] + [f"static {_callback(*f)};" for f in functions] + \
        [_shim(*f) for f in functions]
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    ffi.set_source(MODULE, "\n".join(source) + "\n", include_dirs=[str(INCLUDE_DIR)],
                   extra_link_args=[f"-Wl,-rpath,{libdir}"] if libdir else [], extra_compile_args=["-O1"])
    ffi.embedding_init_code(_INIT_CODE.format(site_dirs=site_directories(), root=package_root(), module=MODULE))
    with tempfile.TemporaryDirectory(prefix="mlusim-magicmind-capi-") as tmp:
        built = Path(ffi.compile(tmpdir=tmp, target=f"lib{LIBRARY}.so", verbose=False))
        partial = out_dir / f".lib{LIBRARY}.so.{os.getpid()}"
        shutil.copyfile(built, partial)
        os.replace(partial, out_dir / f"lib{LIBRARY}.so")


def _link_companion(out_dir: Path) -> None:
    partial = out_dir / f".lib{COMPANION}.so.{os.getpid()}"
    command = [os.environ.get("CC") or "gcc", "-shared", "-x", "c", os.devnull, "-o", str(partial), f"-L{out_dir}",
               "-Wl,--no-as-needed", f"-l{LIBRARY}", "-Wl,-rpath,$ORIGIN", f"-Wl,-soname,lib{COMPANION}.so"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"linking lib{COMPANION}.so failed:\n{' '.join(command)}\n{done.stdout}{done.stderr}")
    os.replace(partial, out_dir / f"lib{COMPANION}.so")


@contextlib.contextmanager
def _locked(directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_libraries(timeout: float = 600) -> Path:
    """The directory of libmagicmind_runtime.so and libmagicmind.so, built if missing (in a child process: cffi's
    compile changes the working directory). Safe to call from several processes at once."""
    directory = library_dir()
    names = (LIBRARY, COMPANION)
    if all((directory / f"lib{n}.so").exists() for n in names):
        return directory
    with _locked(directory):
        if not (directory / f"lib{LIBRARY}.so").exists():
            done = subprocess.run([sys.executable, "-m", "magicmind.capi.build", "--one", str(directory)],
                                  cwd=package_root(), capture_output=True, text=True, timeout=timeout)
            if done.returncode:
                raise RuntimeError(f"building lib{LIBRARY}.so failed:\n{done.stdout}{done.stderr}")
        if not (directory / f"lib{COMPANION}.so").exists():
            _link_companion(directory)
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
