"""Generated kernel modules on disk, under Inductor's cache directory: one file per distinct source, imported as a
module; numba's `cache=True` then keeps the compiled machine code beside it, so a second process that generates the
same source loads the kernel instead of compiling it again (the machinery is mlusim.host.jitcache's)."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType

from mlusim.host import jitcache


def cache_root() -> Path:
    """Where kernel modules are written: `$TORCHINDUCTOR_CACHE_DIR/mlu_numba` (Inductor's cache directory)."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir
    return Path(cache_dir()) / "mlu_numba"


def path_for(source: str) -> Path:
    """The file the kernel module of `source` is written to."""
    return jitcache.path_in(cache_root(), source)


def load(source: str) -> ModuleType:
    """The module of `source`, written to the cache (once) and imported (once per process)."""
    return jitcache.load_from(cache_root(), source, "torch_mlu_kernel")
