"""Build and load the C++ part of torch_mlu (csrc/mlu.cpp and csrc/profiler.cpp) with torch.utils.cpp_extension.

The source ships as package data, so this works from an installed (non-editable) package too. The module is built
on first import and cached on disk in a per-user directory keyed by the torch version, the Python ABI and a hash
of the sources and the compiler flags: later imports load the cached library directly (no compiler run), and a new
torch or a changed source builds a fresh one beside the old.

  MLUSIM_TORCH_CACHE   where the builds are kept (default: $XDG_CACHE_HOME/mlusim/torch_mlu, else
                       ~/.cache/mlusim/torch_mlu; a per-user directory under the temp dir if that is not writable)
  MLUSIM_TORCH_VERBOSE 1 shows the compiler's output
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

NAME = "torch_mlu_C"
SOURCES = tuple(Path(__file__).with_name("csrc") / name for name in ("mlu.cpp", "profiler.cpp"))
#: -O1: the C++ part forwards to Python, so optimisation buys little and -O2 costs compile time
CFLAGS = ("-O1", "-fvisibility=hidden")
#: Written after a successful build: a library without it may still be being linked by another process.
READY = "ready"


def cache_root() -> Path:
    """The per-user directory that holds the builds."""
    configured = os.environ.get("MLUSIM_TORCH_CACHE")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mlusim" / "torch_mlu"


def build_key(sources: tuple[Path, ...] = SOURCES) -> str:
    """torch version, Python ABI and a hash of (sources, flags): one build directory per distinct combination."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    digest.update(" ".join(CFLAGS).encode())
    version = torch.__version__.replace("+", "_")
    return f"torch-{version}-{sys.implementation.cache_tag}-{digest.hexdigest()[:16]}"


def build_directory(sources: tuple[Path, ...] = SOURCES) -> Path:
    return cache_root() / build_key(sources)


def _library(directory: Path, name: str = NAME) -> Path:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[-1] if sys.platform == "win32" else ".so"
    return directory / f"{name}{suffix}"


def _import(path: Path, name: str = NAME):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def _writable(directory: Path) -> Path:
    """`directory`, created; a per-user directory under the system's temp dir when it cannot be (a read-only home)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return directory
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"mlusim-torch-{os.getuid()}" / directory.name
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def _build(directory: Path, sources: tuple[Path, ...], name: str):
    from torch.utils import cpp_extension

    directory = _writable(directory)
    verbose = os.environ.get("MLUSIM_TORCH_VERBOSE", "") not in ("", "0")
    # Kineto's headers (the profiler's plugin interface) sit in their own directory of torch's include tree.
    kineto = [path for path in (Path(p) / "kineto" for p in cpp_extension.include_paths()) if path.is_dir()]
    names = ", ".join(source.name for source in sources)
    print(f"torch_mlu: building the C++ part {names} for torch {torch.__version__} in {directory} (once; "
          f"takes a minute)", file=sys.stderr, flush=True)
    started = time.perf_counter()
    module = cpp_extension.load(name=name, sources=[str(source) for source in sources], extra_cflags=list(CFLAGS),
                                extra_include_paths=[str(path) for path in kineto], build_directory=str(directory),
                                verbose=verbose, with_cuda=False)
    (directory / READY).write_text(f"{time.perf_counter() - started:.1f} s\n")
    sys.modules[name] = module
    return module


@contextlib.contextmanager
def _exclusive(directory: Path):
    """Hold an exclusive lock on `directory`'s build: the ranks of a launched job that all import torch_mlu at once
    build it one at a time (cpp_extension's own baton let two concurrent builds abort a rank under load)."""
    directory = _writable(directory)
    with open(directory.with_name(directory.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield directory
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _built(directory: Path, name: str) -> Path | None:
    library = _library(directory, name)
    return library if (directory / READY).exists() and library.exists() else None


def load(sources: tuple[Path, ...] = SOURCES, name: str = NAME):
    """The extension module built from `sources` (default: the device's csrc/mlu.cpp and profiler.cpp;
    torch_mlu.distributed builds its own): the cached build when there is one, else a fresh build, one process at
    a time."""
    if name in sys.modules:
        return sys.modules[name]
    directory = build_directory(sources)
    fallback = Path(tempfile.gettempdir()) / f"mlusim-torch-{os.getuid()}" / directory.name
    for candidate in (directory, fallback):
        library = _built(candidate, name)
        if library is not None:
            return _import(library, name)
    with _exclusive(directory) as writable:
        library = _built(writable, name)
        if library is not None:
            return _import(library, name)
        return _build(writable, sources, name)
