"""Build libcnrt.so / libcnnl.so / libcncl.so with cffi's embedding mode, once, into an on-disk cache.

A library is a few lines of C per function (cffi generates them) plus embedded Python that, at the first call, starts
an interpreter (or joins the one of the process that loaded it), puts the site directories of the Python that built
it on sys.path (so the installed mlusim is found without PYTHONPATH) and hands every function to `runtime.install`.
The cache key covers the headers, this module, cffi's and Python's versions and those site directories, so a
changed header or another Python builds anew and a test suite builds each library once.

    python -m mlusim.capi.build [DIR]     # build (or find) the three libraries, print their directory
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from . import cdecl

LIBRARY_NAMES = ("cnrt", "cnnl", "cncl")
CACHE_ENV = "MLUSIM_CAPI_CACHE"

#: C added to every library: fork handlers that make fork() from C safe for the embedded interpreter. A fork by
#: Python code (os.fork) holds the GIL and already runs Python's own fork protocol; a fork by a C thread outside
#: Python takes the GIL first and runs the same protocol (PyOS_BeforeFork / AfterFork), so the simulator's at-fork
#: hooks run and no lock is left held by a thread that does not exist in the child.
_C_SOURCE = r"""
#include <pthread.h>
#include "%(header)s"

static int mlusim_fork_prepared;
static PyGILState_STATE mlusim_fork_gil;

static void mlusim_before_fork(void) {
    mlusim_fork_prepared = 0;
    if (!Py_IsInitialized() || PyGILState_Check())
        return;
    mlusim_fork_gil = PyGILState_Ensure();
    PyOS_BeforeFork();
    mlusim_fork_prepared = 1;
}

static void mlusim_after_fork_parent(void) {
    if (!mlusim_fork_prepared)
        return;
    mlusim_fork_prepared = 0;
    PyOS_AfterFork_Parent();
    PyGILState_Release(mlusim_fork_gil);
}

static void mlusim_after_fork_child(void) {
    if (!mlusim_fork_prepared)
        return;
    mlusim_fork_prepared = 0;
    PyOS_AfterFork_Child();
    PyGILState_Release(mlusim_fork_gil);
}

__attribute__((constructor)) static void mlusim_register_fork_handlers(void) {
    pthread_atfork(mlusim_before_fork, mlusim_after_fork_parent, mlusim_after_fork_child);
}
"""

_INIT_CODE = """\
import site as _site
import sys as _sys
for _directory in {site_dirs!r}:
    if _directory not in _sys.path:
        _site.addsitedir(_directory)
if "mlusim" not in _sys.modules and {root!r} not in _sys.path:
    _sys.path.insert(0, {root!r})
from {module} import ffi, lib
from mlusim.capi import runtime as _runtime
_runtime.install(ffi, lib, {library!r}, {functions!r})
"""


def package_root() -> str:
    """The directory the mlusim, cnrt, cnnl and cncl packages that build the libraries are imported from."""
    return str(Path(__file__).resolve().parents[2])


def site_directories() -> list:
    """This Python's site-packages directories (with their .pth files: editable installs, the venv's view of the
    system packages), for the embedded interpreter of a C program, which starts without this venv."""
    directories = []
    for path in list(site.getsitepackages()) + [site.getusersitepackages()]:
        if path and os.path.isdir(path) and os.path.abspath(path) not in directories:
            directories.append(os.path.abspath(path))
    return directories


def cache_root() -> Path:
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlusim" / "capi"


def _module_name(library: str) -> str:
    return f"_mlusim_capi_{library}"


def _init_code(library: str, parsed: cdecl.Library) -> str:
    functions = tuple(f.as_tuple() for f in parsed.functions)
    return _INIT_CODE.format(site_dirs=site_directories(), root=package_root(), module=_module_name(library),
                             library=library, functions=functions)


def build_key() -> str:
    """The cache key of this build: headers, build code, cffi, Python and the recorded site directories."""
    import cffi
    digest = hashlib.sha256()
    for header in sorted(cdecl.INCLUDE_DIR.glob("*.h")):
        digest.update(header.name.encode() + header.read_bytes())
    for module in ("build.py", "cdecl.py"):
        digest.update((Path(__file__).parent / module).read_bytes())
    digest.update(repr((cffi.__version__, sys.version, sysconfig.get_config_var("SOABI"), site_directories(),
                        package_root(), sys.executable)).encode())
    return digest.hexdigest()[:16]


def library_dir() -> Path:
    return cache_root() / f"py{sys.version_info.major}{sys.version_info.minor}-{build_key()}"


def _compile(library: str, out_dir: Path) -> Path:
    """Build one library into out_dir (in this process: cffi's compile changes the working directory)."""
    import cffi
    parsed = cdecl.read_library(library)
    ffi = cffi.FFI()
    if parsed.included_decls.strip():
        ffi.cdef(parsed.included_decls)
    ffi.embedding_api(parsed.own_decls)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    link = [f"-Wl,-rpath,{libdir}"] if libdir else []
    ffi.set_source(_module_name(library), _C_SOURCE % {"header": parsed.headers[0]},
                   include_dirs=[str(cdecl.INCLUDE_DIR)], extra_link_args=link, extra_compile_args=["-O1"])
    ffi.embedding_init_code(_init_code(library, parsed))
    with tempfile.TemporaryDirectory(prefix=f"mlusim-capi-{library}-") as tmp:
        built = Path(ffi.compile(tmpdir=tmp, target=f"lib{library}.so", verbose=False))
        target = out_dir / f"lib{library}.so"
        partial = out_dir / f".lib{library}.so.{os.getpid()}"
        shutil.copyfile(built, partial)
        os.replace(partial, target)
    return target


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
    """The directory holding libcnrt.so, libcnnl.so and libcncl.so for this Python, building what is missing
    (each library in its own process, in parallel). Safe to call from several processes at once."""
    directory = library_dir()
    if all((directory / f"lib{name}.so").exists() for name in LIBRARY_NAMES):
        return directory
    with _locked(directory):
        missing = [name for name in LIBRARY_NAMES if not (directory / f"lib{name}.so").exists()]
        processes = [subprocess.Popen([sys.executable, "-m", "mlusim.capi.build", "--one", name, str(directory)],
                                      cwd=package_root(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True)
                     for name in missing]
        failures = []
        for name, process in zip(missing, processes):
            output, _ = process.communicate(timeout=timeout)
            if process.returncode != 0:
                failures.append(f"lib{name}.so:\n{output}")
        if failures:
            raise RuntimeError("building the mlusim C libraries failed:\n" + "\n".join(failures))
    return directory


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--one"]:
        _compile(args[1], Path(args[2]))
        return 0
    print(build_libraries())
    return 0


if __name__ == "__main__":
    sys.exit(main())
