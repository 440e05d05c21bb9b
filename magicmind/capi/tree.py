"""MagicMind's part of the Neuware tree (`mlusim neuware DIR`): include/mm_*.h and lib64/libmagicmind_runtime.so,
lib64/libmagicmind.so. Registered as the `magicmind` component of the tree (entry point group
`mlusim.neuware_components`), so the tree finds it without the neuware package importing magicmind."""
from __future__ import annotations

import shutil
from pathlib import Path

from . import build


def install(directory) -> list:
    """Copy the headers and the libraries into the tree at `directory`; the library names added."""
    directory = Path(directory)
    include, lib64 = directory / "include", directory / "lib64"
    include.mkdir(parents=True, exist_ok=True)
    lib64.mkdir(parents=True, exist_ok=True)
    for header in sorted(build.INCLUDE_DIR.glob("*.h")):
        shutil.copyfile(header, include / header.name)
    built = build.build_libraries()
    names = [build.LIBRARY, build.COMPANION]
    for name in names:
        partial = lib64 / f".lib{name}.so.partial"
        shutil.copyfile(built / f"lib{name}.so", partial)
        partial.replace(lib64 / f"lib{name}.so")
    return names
