"""Generated kernel modules on disk: one file per distinct source (named by its hash) under Inductor's cache
directory, imported as a module; numba's `cache=True` then keeps the compiled machine code beside it, so a second
process that generates the same source loads the kernel instead of compiling it again."""
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
_modules: dict[str, ModuleType] = {}


def cache_root() -> Path:
    """Where kernel modules are written: `$TORCHINDUCTOR_CACHE_DIR/mlu_numba` (Inductor's cache directory)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    return Path(cache_dir()) / "mlu_numba"


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:32]


def path_for(source: str) -> Path:
    digest = source_hash(source)
    return cache_root() / digest[:2] / f"k{digest}.py"


def _write_once(path: Path, source: str) -> None:
    """Write `source` to `path` unless it is there already (numba's cache is keyed by the file's time stamp: an
    existing file must not be rewritten)."""
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


def load(source: str) -> ModuleType:
    """The module of `source`, written to the cache (once) and imported (once per process)."""
    digest = source_hash(source)
    path = path_for(source)
    key = str(path)  # per cache directory: a new TORCHINDUCTOR_CACHE_DIR gets its own file and numba cache
    with _lock:
        module = _modules.get(key)
        if module is not None:
            return module
        _write_once(path, source)
        name = f"torch_mlu_kernel_{digest}"
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
