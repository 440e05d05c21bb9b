"""`mlusim neuware`: a Neuware-like tree for C and C++ projects, and the compiler/linker flags of the C ABI.

    mlusim neuware DIR        DIR/include/{cnrt,cnnl,cnnl_extra,cncl,cndev,cn_api,cnmlrt,mlusim}.h, the BANG C
                              device headers (bang.h, mlu.h, bang_fusor.h),
                              DIR/lib64/lib{cnrt,cnnl,cnnl_extra,cncl,cndev,cndrv,cnmlrt}.so,
                              DIR/bin/{cncc,cnas} (BANG C: neuware/bangc), DIR/cmake/FindBANG.cmake,
                              DIR/share/cmake/Neuware/NeuwareConfig.cmake (find_package(Neuware CONFIG)),
                              DIR/lib64/pkgconfig/<library>.pc and neuware.pc, DIR/version.txt:
                              NEUWARE_HOME=DIR (NEUWARE_ROOT=DIR for FindNeuware modules that read that) makes a
                              CMake, pkg-config or Makefile project find them
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
#: entry point group of other packages' parts of the tree (MagicMind's headers and libraries): each is a function
#: of the tree's directory
COMPONENT_GROUP = "mlusim.neuware_components"


def components() -> list:
    """The installed packages' parts of the tree (entry points of COMPONENT_GROUP), by name."""
    from importlib import metadata
    return sorted(metadata.entry_points(group=COMPONENT_GROUP), key=lambda entry: entry.name)


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
    for name in build.all_library_names():
        target = lib64 / f"lib{name}.so"
        partial = lib64 / f".lib{name}.so.partial"
        shutil.copyfile(libraries / f"lib{name}.so", partial)
        partial.replace(target)  # a program that has the old copy loaded keeps its mapping
    _bang_c(directory)
    for component in components():
        component.load()(directory)
    (directory / "version.txt").write_text(_version_text())
    _write_cmake_config(directory)
    _write_pkg_config(directory)
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


#: library -> the version key of `versions()` it reports (the companions follow the library they depend on)
def _library_versions() -> dict:
    known = versions()
    return {name: known[build.COMPANIONS.get(name, name)] for name in build.all_library_names()}


def _write_cmake_config(directory: Path) -> None:
    """share/cmake/Neuware/NeuwareConfig.cmake and its version file: NEUWARE_ROOT_DIR, NEUWARE_INCLUDE_DIRS,
    NEUWARE_LIBRARIES, CNRT_VERSION / CNNL_VERSION / ..., and an imported target Neuware::<library> per library."""
    config = directory / "share" / "cmake" / "Neuware"  # searched on every platform (lib64 is not, on Debian)
    config.mkdir(parents=True, exist_ok=True)
    library_versions = _library_versions()
    lines = ["# Written by `mlusim neuware`: the Neuware tree of mlusim, the software Cambricon MLU.",
             'get_filename_component(NEUWARE_ROOT_DIR "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)',
             'set(NEUWARE_INCLUDE_DIRS "${NEUWARE_ROOT_DIR}/include")',
             'set(NEUWARE_LIBRARY_DIR "${NEUWARE_ROOT_DIR}/lib64")',
             "set(NEUWARE_LIBRARIES)"]
    for name in build.all_library_names():
        upper = name.upper()
        lines += [f'set({upper}_VERSION "{library_versions[name]}")',
                  f'set({upper}_LIBRARY "${{NEUWARE_LIBRARY_DIR}}/lib{name}.so")',
                  f"if(NOT TARGET Neuware::{name})",
                  f"  add_library(Neuware::{name} SHARED IMPORTED)",
                  f'  set_target_properties(Neuware::{name} PROPERTIES IMPORTED_LOCATION "${{{upper}_LIBRARY}}"',
                  '    INTERFACE_INCLUDE_DIRECTORIES "${NEUWARE_INCLUDE_DIRS}")',
                  "endif()",
                  f'list(APPEND NEUWARE_LIBRARIES "${{{upper}_LIBRARY}}")']
    lines += ['set(NEUWARE_VERSION "${CNRT_VERSION}")', "set(Neuware_FOUND TRUE)", "set(NEUWARE_FOUND TRUE)"]
    (config / "NeuwareConfig.cmake").write_text("\n".join(lines) + "\n")
    (config / "NeuwareConfigVersion.cmake").write_text(
        f'set(PACKAGE_VERSION "{library_versions["cnrt"]}")\n'
        "if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION OR\n"
        "   (PACKAGE_FIND_VERSION_MAJOR AND NOT PACKAGE_FIND_VERSION_MAJOR EQUAL "
        f'{library_versions["cnrt"].split(".")[0]}))\n'
        "  set(PACKAGE_VERSION_COMPATIBLE FALSE)\nelse()\n  set(PACKAGE_VERSION_COMPATIBLE TRUE)\n"
        "  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)\n    set(PACKAGE_VERSION_EXACT TRUE)\n  endif()\n"
        "endif()\n")


def _write_pkg_config(directory: Path) -> None:
    """lib64/pkgconfig/<library>.pc for every library, and neuware.pc that requires them all."""
    pkgconfig = directory / "lib64" / "pkgconfig"
    pkgconfig.mkdir(parents=True, exist_ok=True)
    library_versions = _library_versions()
    prefix = f"prefix={directory}\nlibdir=${{prefix}}/lib64\nincludedir=${{prefix}}/include\n\n"
    for name in build.all_library_names():
        requires = build.COMPANIONS.get(name, "cnrt" if name in ("cnnl", "cncl") else "")
        (pkgconfig / f"{name}.pc").write_text(
            prefix + f"Name: {name}\nDescription: {name} of mlusim's Neuware tree (runs on the simulated MLU)\n"
            f"Version: {library_versions[name]}\n" + (f"Requires: {requires}\n" if requires else "")
            + f"Cflags: -I${{includedir}}\nLibs: -L${{libdir}} -Wl,-rpath,${{libdir}} -l{name}\n")
    (pkgconfig / "neuware.pc").write_text(
        prefix + "Name: neuware\nDescription: every library of mlusim's Neuware tree\n"
        f"Version: {library_versions['cnrt']}\nRequires: {' '.join(build.all_library_names())}\n"
        "Cflags: -I${includedir}\n")


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
        print(f"Neuware tree at {tree}: export NEUWARE_HOME={tree} NEUWARE_ROOT={tree}")
    return 0
