"""C shared libraries whose functions call into Python (cffi's embedding mode), built once into an on-disk cache.

The libraries of the Neuware tree (libcnrt.so, libcnnl.so, ...) and MagicMind's (libmagicmind_runtime.so) are made
the same way: each exported function is a C shim that calls a cffi `extern "Python"` callback; the embedded
interpreter, at the first call, joins the process's interpreter or starts one with the site directories of the
Python that built it. This module holds what the two builds share: where the cache is, the lock that lets several
processes build at once, the compile step and the symbol-less companion libraries.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

CACHE_ENV = "MLUSIM_CAPI_CACHE"


def site_directories() -> list:
    """This Python's site-packages directories (with their .pth files: editable installs, the venv's view of the
    system packages), for the embedded interpreter of a C program, which starts without this venv."""
    directories = []
    for path in list(site.getsitepackages()) + [site.getusersitepackages()]:
        if path and os.path.isdir(path) and os.path.abspath(path) not in directories:
            directories.append(os.path.abspath(path))
    return directories


def cache_root() -> Path:
    """`$MLUSIM_CAPI_CACHE`, else `$XDG_CACHE_HOME/mlusim/capi` (default `~/.cache/mlusim/capi`)."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlusim" / "capi"


@contextlib.contextmanager
def locked(directory: Path):
    """An exclusive lock on `directory` (created if missing), held across processes while a build fills it."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _needed_stubs(names, directory: Path) -> list:
    """Link arguments that give a library DT_NEEDED entries on lib<name>.so for each name, found at run time next
    to it ($ORIGIN): empty stand-ins with those sonames are linked, so the real ones need not be built yet."""
    if not names:
        return []
    for name in names:
        _empty_library(name, directory / f"lib{name}.so")
    return [f"-L{directory}", "-Wl,--no-as-needed"] + [f"-l{name}" for name in names] + ["-Wl,--as-needed",
                                                                                         "-Wl,-rpath,$ORIGIN"]


def compile_embedded(module: str, library: str, cdef: str, source: str, include_dir: Path, init_code: str,
                     out_dir: Path, needed=()) -> Path:
    """Build lib<library>.so into out_dir: cffi's embedding of `cdef` (the callbacks) and `source` (the shims),
    running `init_code` at the first call; `needed`: libraries of the same directory it lists as dependencies. Call
    it in a process of its own: cffi's compile changes the working directory. The file appears whole (written
    beside and renamed)."""
    import cffi
    ffi = cffi.FFI()
    ffi.embedding_api("")  # the exports are the shims: cffi only embeds the interpreter
    ffi.cdef(cdef)
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    with tempfile.TemporaryDirectory(prefix=f"mlusim-capi-{library}-") as tmp:
        stubs = Path(tmp) / "needed"
        stubs.mkdir()
        link = ([f"-Wl,-rpath,{libdir}"] if libdir else []) + _needed_stubs(needed, stubs)
        ffi.set_source(module, source, include_dirs=[str(include_dir)], extra_link_args=link,
                       extra_compile_args=["-O1"])
        ffi.embedding_init_code(init_code)
        built = Path(ffi.compile(tmpdir=tmp, target=f"lib{library}.so", verbose=False))
        target = out_dir / f"lib{library}.so"
        partial = out_dir / f".lib{library}.so.{os.getpid()}"
        shutil.copyfile(built, partial)
        os.replace(partial, target)
    return target


def _empty_library(name: str, path: Path, link=()) -> None:
    """A shared object with no code, soname lib<name>.so, linked with `link`."""
    command = [os.environ.get("CC") or "gcc", "-shared", "-x", "c", os.devnull, "-o", str(path),
               f"-Wl,-soname,lib{name}.so", *link]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"linking lib{name}.so failed:\n{' '.join(command)}\n{result.stdout}{result.stderr}")


def link_companion(name: str, depends: str, out_dir: Path) -> None:
    """lib<name>.so: no code of its own, DT_NEEDED on lib<depends>.so (found next to it through $ORIGIN)."""
    partial = out_dir / f".lib{name}.so.{os.getpid()}"
    _empty_library(name, partial, [f"-L{out_dir}", "-Wl,--no-as-needed", f"-l{depends}", "-Wl,-rpath,$ORIGIN"])
    os.replace(partial, out_dir / f"lib{name}.so")


def add_build_environment(digest, package_root: str) -> None:
    """Feed into a build's cache key what every embedded library depends on besides its own sources: this module
    (the compile step), cffi's and Python's versions, the site directories and the package root it records."""
    import cffi
    digest.update(Path(__file__).read_bytes())
    digest.update(repr((cffi.__version__, sys.version, sysconfig.get_config_var("SOABI"), site_directories(),
                        package_root, sys.executable)).encode())
