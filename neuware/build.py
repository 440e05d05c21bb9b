"""Build libcnrt.so / libcnnl.so / libcncl.so with cffi's embedding mode, once, into an on-disk cache.

Each exported function is a C shim with the header's exact prototype that calls a cffi `extern "Python"` callback
(`_mlusim_py_<name>`) with every pointer, handle and function pointer converted to `intptr_t` (Python then gets
plain integers, the cheapest form: a device pointer or a handle needs no conversion at all). The embedded Python,
at the first call, starts an interpreter (or joins the one of the process that loaded the library), puts the site
directories of the Python that built it on sys.path (so the installed mlusim is found without PYTHONPATH) and hands
every callback to `runtime.install`.
The cache key covers the headers, this module, cffi's and Python's versions and those site directories, so a
changed header or another Python builds anew and a test suite builds each library once.

    python -m neuware.build [DIR]     # build (or find) the three libraries, print their directory
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from mlusim.host import cembed

from . import cdecl
from .cdecl import CALLBACK_PREFIX

LIBRARY_NAMES = ("cnrt", "cnnl", "cncl", "cndev", "cndrv")
#: libraries real back ends link that have no function of their own here (see cnnl_extra.h, cnmlrt.h): each is a
#: shared library with no symbols that depends on the library whose functions its header brings in
COMPANIONS = {"cnnl_extra": "cnnl", "cnmlrt": "cnrt"}

#: C added to every library: fork handlers that make fork() from C safe for the embedded interpreter. A fork by
#: Python code (os.fork) holds the GIL and already runs Python's own fork protocol; a fork by a C thread outside
#: Python takes the GIL first and runs the same protocol (PyOS_BeforeFork / AfterFork), so the simulator's at-fork
#: hooks run and no lock is left held by a thread that does not exist in the child.
_FORK_HANDLERS = r"""
#include <pthread.h>

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

/* Loaded into a running Python (ctypes.CDLL, or a Python extension linking the library): start the embedded
   module now, under the GIL the loading thread holds. cffi's start-up lock on Python < 3.12 is
   PyCapsule_Type.tp_version_tag, which it waits to be 0; any attribute lookup on a capsule may have set it, and
   the first call would spin forever. Invalidating the capsule type's cache (what a type change does) sets it to 0,
   and holding the GIL until the start keeps it so. */
static void _mlusim_py__started(void);

__attribute__((constructor)) static void mlusim_start_in_a_running_python(void) {
    if (!Py_IsInitialized() || !PyGILState_Check())
        return;
#if PY_VERSION_HEX < 0x030C0000
    PyType_Modified(&PyCapsule_Type);
#endif
    _mlusim_py__started();
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
from neuware import runtime as _runtime
_runtime.install(ffi, lib, {library!r}, {functions!r})
ffi.def_extern(name="_mlusim_py__started")(lambda: None)
"""


def package_root() -> str:
    """The directory the mlusim, cnrt, cnnl and cncl packages that build the libraries are imported from."""
    return str(Path(__file__).resolve().parents[1])


def _module_name(library: str) -> str:
    return f"_mlusim_capi_{library}"


def _callback_declaration(function: cdecl.Function) -> str:
    """`RET _mlusim_py_NAME(params)`, pointers and handles as intptr_t."""
    params = ", ".join(("intptr_t" if ctype.passed_as_address else ctype.spelling) + f" {name}"
                       for name, ctype in function.params) or "void"
    return f"{function.result.spelling} {CALLBACK_PREFIX}{function.name}({params})"


def _shim(function: cdecl.Function, declaration: str) -> str:
    """The exported C function: the header's prototype, calling the Python callback."""
    arguments = ", ".join(f"(intptr_t){name}" if ctype.passed_as_address else name
                          for name, ctype in function.params)
    call = f"{CALLBACK_PREFIX}{function.name}({arguments})"
    returns = "" if (function.result.category == "void" and function.result.pointers == 0) else "return "
    return f"{declaration.rstrip(';').strip()} {{ {returns}{call}; }}"


#: C added to libcnrt: the thread state of BANG C kernels (neuware/bangc/include/mlusim_bang/core.h), which every
#: object cncc builds reads in initial-exec thread-local storage, defined in the one library they all link
_BANG_THREAD_STATE = r"""
#define MLUSIM_BANG_TLS __attribute__((visibility("default"), tls_model("initial-exec")))
MLUSIM_BANG_TLS __thread void *__mlu_ctx;
MLUSIM_BANG_TLS __thread void *__mlu_escape;
MLUSIM_BANG_TLS __thread int taskIdX, taskIdY, taskIdZ, taskDimX, taskDimY, taskDimZ, taskId, taskDim, clusterId,
    clusterDim, coreId, coreDim;
"""
_LIBRARY_EXTRAS = {"cnrt": _BANG_THREAD_STATE}
#: a library's dependencies on others of the tree: the real libcnrt is built on CNDrv and lists libcndrv.so, so
#: programs that call cn_api.h functions link -lcnrt alone (DIOPI's camb back end: cnCtxGetCurrent,
#: cnGetCtxConfigParam)
NEEDED = {"cnrt": ("cndrv",)}


def c_source(parsed: cdecl.Library) -> str:
    """The C part of one library: its header, the callbacks' forward declarations, the shims, the fork handlers."""
    lines = [f'#include "{header}"' for header in parsed.headers]
    lines += [f"static {_callback_declaration(f)};" for f in parsed.functions]
    lines += [_shim(f, parsed.function_decls[f.name]) for f in parsed.functions]
    return "\n".join(lines) + "\n" + _FORK_HANDLERS + _LIBRARY_EXTRAS.get(parsed.name, "")


def cffi_declarations(parsed: cdecl.Library) -> str:
    """What cffi is told: the types, and one extern "Python" callback per function."""
    callbacks = "\n".join(f"{_callback_declaration(f)};" for f in parsed.functions)
    return (f'{parsed.included_decls}\n{parsed.own_types}\nextern "Python" {{\n{callbacks}\n'
            'void _mlusim_py__started(void);\n}\n')


def _init_code(library: str, parsed: cdecl.Library) -> str:
    functions = tuple(f.as_tuple() for f in parsed.functions)
    return _INIT_CODE.format(site_dirs=cembed.site_directories(), root=package_root(), module=_module_name(library),
                             library=library, functions=functions)


def build_key() -> str:
    """The cache key of this build: headers, build code, cffi, Python and the recorded site directories."""
    digest = hashlib.sha256()
    for header in sorted(cdecl.INCLUDE_DIR.glob("*.h")):
        digest.update(header.name.encode() + header.read_bytes())
    for module in ("build.py", "cdecl.py"):  # the C the library is made of
        digest.update((Path(__file__).parent / module).read_bytes())
    cembed.add_build_environment(digest, package_root())
    return digest.hexdigest()[:16]


def library_dir() -> Path:
    return cembed.cache_root() / f"py{sys.version_info.major}{sys.version_info.minor}-{build_key()}"


def _compile(library: str, out_dir: Path) -> Path:
    """Build one library into out_dir (in this process: cffi's compile changes the working directory)."""
    parsed = cdecl.read_library(library)
    return cembed.compile_embedded(_module_name(library), library, cffi_declarations(parsed), c_source(parsed),
                                   cdecl.INCLUDE_DIR, _init_code(library, parsed), out_dir,
                                   NEEDED.get(library, ()))


def all_library_names() -> tuple:
    """Every library of the tree: the five over the Python packages and the companions."""
    return LIBRARY_NAMES + tuple(COMPANIONS)


def build_libraries(timeout: float = 600) -> Path:
    """The directory holding libcnrt.so, libcnnl.so, ... for this Python, building what is missing (each library in
    its own process, in parallel; the companions after them). Safe to call from several processes at once."""
    directory = library_dir()
    if all((directory / f"lib{name}.so").exists() for name in all_library_names()):
        return directory
    with cembed.locked(directory):
        missing = [name for name in LIBRARY_NAMES if not (directory / f"lib{name}.so").exists()]
        processes = [subprocess.Popen([sys.executable, "-m", "neuware.build", "--one", name, str(directory)],
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
        for name, depends in COMPANIONS.items():
            if not (directory / f"lib{name}.so").exists():
                cembed.link_companion(name, depends, directory)
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
