"""`mlusim neuware`: a Neuware-like tree for C and C++ projects, and the compiler/linker flags of the C ABI.

    mlusim neuware DIR        DIR/include/{cnrt,cnnl,cncl,cndev,cn_api,mlusim}.h, the BANG C device headers
                              (bang.h, mlu.h, bang_fusor.h), DIR/lib64/lib{cnrt,cnnl,cncl,cndev,cndrv}.so,
                              DIR/bin/{cncc,cnas} (BANG C: neuware/bangc), DIR/cmake/FindBANG.cmake,
                              DIR/version.txt: NEUWARE_HOME=DIR makes a CMake or Makefile project find them
    mlusim neuware --cflags   -I<include directory>
    mlusim neuware --libs     -L<library directory> -Wl,-rpath,<library directory> -lcnnl -lcncl -lcndev -lcndrv
                              -lcnrt

The libraries are built on first use and cached (see build.py); the tree holds copies, so it stays usable.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Optional, Sequence

from . import build, cdecl

LIBRARY_LINK_ORDER = ("cnnl", "cncl", "cndev", "cndrv", "cnrt")


def versions() -> dict:
    """library -> its version string, from the headers' macros."""
    macros = {}
    for header in ("cnrt.h", "cnnl.h", "cncl.h", "cn_api.h"):
        macros.update(cdecl.header_macros(header))
    return {
        "cnrt": "{CNRT_MAJOR_VERSION}.{CNRT_MINOR_VERSION}.{CNRT_PATCH_VERSION}".format(**macros),
        "cnnl": "{CNNL_MAJOR}.{CNNL_MINOR}.{CNNL_PATCHLEVEL}".format(**macros),
        "cncl": "{CNCL_MAJOR_VERSION}.{CNCL_MINOR_VERSION}.{CNCL_PATCH_VERSION}".format(**macros),
        "cndrv": "{CN_MAJOR_VERSION}.{CN_MINOR_VERSION}.{CN_PATCH_VERSION}".format(**macros),
        "cndev": "{}.{}.{}".format(*_cndev_version()),
    }


def _cndev_version() -> tuple:
    from cndev import LIB_VERSION
    return LIB_VERSION


def _version_text() -> str:
    from importlib import metadata
    try:
        mlusim_version = metadata.version("mlusim")
    except metadata.PackageNotFoundError:
        mlusim_version = "unknown"
    lines = [f"Neuware (mlusim {mlusim_version}: the software Cambricon MLU; libraries run on the simulator)"]
    lines += [f"{name} {version}" for name, version in versions().items()]
    return "\n".join(lines) + "\n"


def make_tree(directory: Path) -> Path:
    """Lay out the Neuware-like tree in `directory` (created or refreshed) and return it."""
    directory = Path(directory).resolve()
    libraries = build.build_libraries()
    include, lib64 = directory / "include", directory / "lib64"
    include.mkdir(parents=True, exist_ok=True)
    lib64.mkdir(parents=True, exist_ok=True)
    for header in sorted(cdecl.INCLUDE_DIR.glob("*.h")):
        shutil.copyfile(header, include / header.name)
    for name in build.LIBRARY_NAMES:
        target = lib64 / f"lib{name}.so"
        partial = lib64 / f".lib{name}.so.partial"
        shutil.copyfile(libraries / f"lib{name}.so", partial)
        partial.replace(target)  # a program that has the old copy loaded keeps its mapping
    _bang_c(directory)
    (directory / "version.txt").write_text(_version_text())
    return directory


#: bin/cncc and bin/cnas: the driver of the Python that laid out the tree, told where the tree is
_TOOL = """#!/bin/sh
# {name} of mlusim's Neuware tree: BANG C on the simulated MLU (neuware/bangc)
MLUSIM_CNCC_TREE="$(cd "$(dirname "$0")/.." && pwd)" exec "{python}" -c \
  "import sys; from neuware.bangc import driver; sys.exit(driver.{entry}())" "$@"
"""


def _bang_c(directory: Path) -> None:
    """The BANG C part of the tree: device headers, bin/cncc, bin/cnas, cmake/FindBANG.cmake."""
    from .bangc import driver
    include = directory / "include"
    shutil.copytree(driver.PACKAGE_INCLUDE, include, dirs_exist_ok=True)
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, entry in (("cncc", "main"), ("cnas", "cnas_main")):
        tool = bin_dir / name
        tool.write_text(_TOOL.format(name=name, python=sys.executable, entry=entry))
        tool.chmod(0o755)
    cmake = directory / "cmake"
    cmake.mkdir(exist_ok=True)
    shutil.copyfile(Path(driver.__file__).parent / "cmake" / "FindBANG.cmake", cmake / "FindBANG.cmake")


def cflags(directory: Optional[Path] = None) -> str:
    include = Path(directory).resolve() / "include" if directory else cdecl.INCLUDE_DIR
    return f"-I{include}"


def libs(directory: Optional[Path] = None) -> str:
    lib64 = Path(directory).resolve() / "lib64" if directory else build.build_libraries()
    return f"-L{lib64} -Wl,-rpath,{lib64} " + " ".join(f"-l{name}" for name in LIBRARY_LINK_ORDER)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mlusim neuware",
        description="Lay out a Neuware-like tree (include/, lib64/, version.txt) whose cnrt.h/cnnl.h/cncl.h and "
                    "libcnrt/libcnnl/libcncl.so run on the simulator; or print the compiler and linker flags.")
    parser.add_argument("directory", nargs="?", type=Path, help="where to lay out the tree (NEUWARE_HOME)")
    parser.add_argument("--cflags", action="store_true", help="print the compiler flags (-I...)")
    parser.add_argument("--libs", action="store_true", help="print the linker flags (-L... -l...)")
    args = parser.parse_args(argv)
    if not (args.directory or args.cflags or args.libs):
        parser.error("give a directory, --cflags or --libs")
    tree = make_tree(args.directory) if args.directory else None
    if args.cflags or args.libs:
        flags = ([cflags(tree)] if args.cflags else []) + ([libs(tree)] if args.libs else [])
        print(" ".join(flags))
    else:
        print(f"Neuware tree at {tree}: export NEUWARE_HOME={tree}")
    return 0
