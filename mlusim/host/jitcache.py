"""Generated kernel modules on disk, for code generators that write numba source at run time.

One file per distinct source (named by its hash) under a cache directory, imported as a module once per process;
numba's `cache=True` keeps the compiled machine code beside it, so a second process that generates the same source
loads the kernel instead of compiling it again. The directory is `$MLUSIM_CACHE_DIR/<area>` (default
`~/.cache/mlusim/<area>`).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path
from types import ModuleType

_lock = threading.Lock()
_modules: dict = {}


def cache_root(area: str) -> Path:
    """The directory the generated modules of `area` (one code generator) are written to."""
    base = os.environ.get("MLUSIM_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "mlusim")
    return Path(base) / area


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:32]


def _write_once(path: Path, source: str) -> None:
    """Write `source` to `path` unless it is there already (numba's cache is keyed by the file's time stamp: an
    existing file must not be rewritten); written to a temporary file and renamed, so a reader never sees half."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            out.write(source)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def path_in(directory: Path, source: str) -> Path:
    """The file `source` is (or will be) written to under `directory`: named by its hash, in a folder of 256."""
    digest = source_hash(source)
    return directory / digest[:2] / f"k{digest}.py"


def load_from(directory: Path, source: str, prefix: str) -> ModuleType:
    """The module of `source`, written under `directory` once and imported once per process as `prefix_<hash>`.
    Modules are kept per file: another directory (another cache setting) gets its own file and numba cache."""
    path = path_in(directory, source)
    key = str(path)
    with _lock:
        module = _modules.get(key)
        if module is not None:
            return module
        _write_once(path, source)
        name = f"{prefix}_{source_hash(source)}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        _modules[key] = module
        return module


def load(source: str, area: str) -> ModuleType:
    """The module of `source` (written to `area`'s cache directory once, imported once per process)."""
    return load_from(cache_root(area), source, f"mlusim_generated_{area}")
