"""cncc: the BANG C compiler driver of mlusim's Neuware tree (`bin/cncc`, `mlusim cncc`).

Takes the command lines real builds pass to Cambricon's cncc and builds `.mlu` sources into host objects, shared
libraries and executables whose kernels run on the simulated MLU:

    cncc -c kernel.mlu -o kernel.o --bang-mlu-arch=mtp_372 -O3 -fPIC -I include -DNDEBUG -std=c++14
    cncc -shared a.mlu b.o -o libops.so          cncc app.mlu -o app        cncc @flags.rsp
    cncc -M / -MM / -MD / -MMD -MF deps.d -MT target ...      cncc -S --bang-device-only k.mlu -o k.s; cnas k.s -o k.o

A `.mlu` file is preprocessed by the host compiler as C++ with mlusim's bang.h, rewritten (neuware/bangc/rewrite.py)
and compiled; objects are cached by the content of the rewritten unit and the flags (`MLUSIM_CNCC_CACHE`, default
~/.cache/mlusim/cncc). Diagnostics name the user's file and line. Other sources (.cpp, .c) and objects go to the
host compiler unchanged.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from . import unicode_space
from .rewrite import CompileError, rewrite

PACKAGE_INCLUDE = Path(__file__).resolve().parent / "include"
ABI_INCLUDE = Path(__file__).resolve().parent.parent / "include"
BANG_SOURCES = (".mlu", ".mluh", ".bang")
OBJECTS = (".o", ".a", ".so", ".obj", ".lo")
#: --bang-mlu-arch / --bang-arch values -> ISA number
ARCHES = {"mtp_220": 220, "mtp_270": 270, "mtp_290": 290, "mtp_372": 372, "mtp_592": 592,
          "mtp_613": 592, "mlu220": 220, "mlu270": 270, "mlu290": 290, "mlu370": 372, "mlu590": 592,
          "compute_20": 270, "compute_30": 372, "compute_50": 592}
VERSION = "cncc (mlusim) 4.0.0: BANG C on the simulated MLU; host compiler"
CACHE_ENV = "MLUSIM_CNCC_CACHE"
_IGNORED_WITH_VALUE = ("-ccbin", "--compiler-bindir", "-Xcompiler", "--bang-wram-align", "-arch")
_IGNORED = ("--bang-device-only", "--bang-host-only", "-Wno-unused-command-line-argument", "-cnbin",
            "--no-neuware-version-check", "-fno-exceptions", "-mcpu", "--bang-stack-on-ldram")


class DriverError(Exception):
    """A bad cncc command line (exit status 1, message on stderr)."""


@dataclass
class Options:
    mode: str = "link"                 # link, compile (-c), assemble (-S), preprocess (-E), depend (-M/-MM)
    output: Optional[str] = None
    inputs: list = field(default_factory=list)
    preprocessor: list = field(default_factory=list)    # -I -D -U -include -isystem
    compiler: list = field(default_factory=list)        # -O -g -f -W -std -m
    linker: list = field(default_factory=list)          # -L -l -Wl, -shared -pthread -rdynamic
    depend: list = field(default_factory=list)          # -MD -MMD -MF -MT -MQ -MP
    depend_only: str = ""                                # -M or -MM
    arches: list = field(default_factory=list)
    language: Optional[str] = None
    shared: bool = False
    dlink: bool = False
    verbose: bool = False
    std: str = "c++17"


def expand_response_files(argv: Sequence[str], depth: int = 0) -> list:
    """@file arguments replaced by the file's arguments (shell quoting), recursively."""
    out = []
    for arg in argv:
        if arg.startswith("@") and len(arg) > 1:
            if depth > 16:
                raise DriverError(f"response files nested too deep at {arg}")
            try:
                text = Path(arg[1:]).read_text()
            except OSError as error:
                raise DriverError(f"cannot read response file {arg[1:]}: {error.strerror}") from None
            out += expand_response_files(shlex.split(text), depth + 1)
        else:
            out.append(arg)
    return out


def parse(argv: Sequence[str]) -> Options:
    """The options of a cncc command line."""
    args = expand_response_files(argv)
    o = Options()
    i = 0

    def value(flag: str) -> str:
        nonlocal i
        if i + 1 >= len(args):
            raise DriverError(f"missing argument after {flag}")
        i += 1
        return args[i]

    while i < len(args):
        a = args[i]
        if a == "-c":
            o.mode = "compile"
        elif a == "-S":
            o.mode = "assemble"
        elif a == "-E":
            o.mode = "preprocess"
        elif a in ("-M", "-MM"):
            o.depend_only = a
        elif a in ("-MD", "-MMD", "-MP"):
            o.depend.append(a)
        elif a in ("-MF", "-MT", "-MQ"):
            o.depend += [a, value(a)]
        elif a == "-o":
            o.output = value(a)
        elif a.startswith("-o") and len(a) > 2:
            o.output = a[2:]
        elif a in ("-I", "-D", "-U", "-include", "-isystem", "-iquote", "-idirafter"):
            o.preprocessor += [a, value(a)]
        elif a.startswith(("-I", "-D", "-U")):
            o.preprocessor.append(a)
        elif a.startswith(("-std=", "--std=")):
            o.std = _standard(a.split("=", 1)[1])
        elif a == "-x":
            o.language = value(a)
        elif a.startswith("--bang-mlu-arch=") or a.startswith("--bang-arch="):
            o.arches.append(_arch(a.split("=", 1)[1]))
        elif a in ("--bang-mlu-arch", "--bang-arch"):
            o.arches.append(_arch(value(a)))
        elif a == "-shared":
            o.shared = True
            o.linker.append(a)
        elif a == "-dlink":
            o.dlink = True
        elif a in ("-pthread", "-rdynamic", "-static-libstdc++", "-static-libgcc"):
            o.linker.append(a)
            if a == "-pthread":
                o.compiler.append(a)
        elif a in ("-L", "-l"):
            o.linker += [a, value(a)]
        elif a.startswith(("-L", "-l", "-Wl,")):
            o.linker.append(a)
        elif a in ("-v", "--verbose"):
            o.verbose = True
        elif a in _IGNORED or a.startswith(("--target=", "--bang-", "-mcpu=")):
            pass
        elif a in _IGNORED_WITH_VALUE:
            value(a)
        elif a.startswith(("-O", "-g", "-f", "-W", "-m", "-w")) or a in ("-pedantic", "-ansi"):
            o.compiler.append(a)
        elif a.startswith("-"):
            raise DriverError(f"unknown option '{a}'")
        else:
            o.inputs.append(a)
        i += 1
    if not o.inputs and not o.dlink:
        raise DriverError("no input files")
    return o


def _standard(name: str) -> str:
    """The language standard: at least C++11 (the device library needs it)."""
    allowed = ("c++11", "c++14", "c++17", "c++20", "gnu++11", "gnu++14", "gnu++17", "gnu++20")
    if name not in allowed:
        raise DriverError(f"-std={name}: BANG C is C++ (one of {', '.join(allowed)})")
    return name


def _arch(name: str) -> int:
    key = name.lower()
    if key not in ARCHES:
        raise DriverError(f"unknown MLU architecture '{name}' (one of {', '.join(sorted(ARCHES))})")
    return ARCHES[key]


# ---- the target -------------------------------------------------------------------------------------------------

def target_isa(arches: Sequence[int]) -> int:
    """The ISA the device code is built for: the simulated board's (MLUSIM_ARCH, default MLU370-X4) when it is one
    of the requested architectures (or none was requested), else the first requested."""
    from mlusim.arch import DEFAULT_BOARD, board
    default = board(os.environ.get("MLUSIM_ARCH", DEFAULT_BOARD)).isa
    if not arches or default in arches:
        return default
    return arches[0]


def arch_macros(isa: int) -> list:
    """-D flags of the device capacity macros (KiB) and __BANG_ARCH__ for an ISA."""
    from mlusim.arch import BOARDS
    spec = next(b for b in BOARDS.values() if b.isa == isa)
    return [f"-D__BANG_ARCH__={isa}", "-D__BANG__=1", f"-D__MLU_NRAM_SIZE__={spec.nram_bytes // 1024}",
            f"-D__MLU_WRAM_SIZE__={spec.wram_bytes // 1024}", f"-D__MLU_SRAM_SIZE__={spec.sram_bytes // 1024}",
            f"-D__BANG_MLU_ARCH__={isa}", "-D__MLUSIM__=1"]


# ---- include and library directories ----------------------------------------------------------------------------

def tree_dir() -> Optional[Path]:
    """The Neuware tree this cncc belongs to (bin/cncc sets MLUSIM_CNCC_TREE), if any."""
    value = os.environ.get("MLUSIM_CNCC_TREE")
    return Path(value) if value else None


def include_dirs() -> list:
    tree = tree_dir()
    if tree is not None:
        return [tree / "include"]
    return [PACKAGE_INCLUDE, ABI_INCLUDE]


def library_dir() -> Path:
    tree = tree_dir()
    if tree is not None:
        return tree / "lib64"
    from ..build import build_libraries
    return build_libraries()


def host_compiler() -> str:
    return os.environ.get("MLUSIM_CNCC_CXX") or shutil.which("g++") or "c++"


def _compiler_version(cxx: str) -> str:
    return subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.split("\n")[0]


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV)
    return Path(root) if root else Path.home() / ".cache" / "mlusim" / "cncc"


# ---- compiling one .mlu -----------------------------------------------------------------------------------------

def _is_bang(path: str, language: Optional[str]) -> bool:
    if language is not None:
        return language in ("bang", "mlu", "bangc")
    return path.endswith(BANG_SOURCES)


def _run(command: list, verbose: bool, **kw) -> subprocess.CompletedProcess:
    if verbose:
        print(" ".join(shlex.quote(str(c)) for c in command), file=sys.stderr)
    return subprocess.run(command, **kw)


def preprocess_command(o: Options, source: str, isa: int) -> list:
    flags = [f"-I{d}" for d in include_dirs()]
    return ([host_compiler(), "-E", "-x", "c++", f"-std={o.std}"] + arch_macros(isa) + flags + o.preprocessor
            + ["-include", "bang.h", source])


def user_file_filter(include: Sequence[Path]):
    """Code from these directories (mlusim's device headers) and system headers is not rewritten."""
    roots = tuple(str(Path(d).resolve()) + os.sep for d in include)

    def user(path: str) -> bool:
        if path.startswith("<"):
            return False
        try:
            resolved = str(Path(path).resolve())
        except OSError:
            return True
        return not resolved.startswith(roots)
    return user


def translate(o: Options, source: str, isa: int) -> str:
    """The rewritten preprocessed C++ of one .mlu file (CompileError / DriverError on failure)."""
    command = preprocess_command(o, source, isa)
    done = unicode_space.preprocess(command, source, lambda c: _run(c, o.verbose, capture_output=True, text=True))
    if done.returncode:
        sys.stderr.write(done.stderr)
        raise DriverError(None)
    if done.stderr:
        sys.stderr.write(done.stderr)
    result = rewrite(done.stdout, user_file_filter(include_dirs()))
    if result.core_id_checks and not result.memory_cores:
        file, line = result.core_id_checks[0]
        sys.stderr.write(f"{file}:{line}: warning: code for the memory core (coreId == 0x80) does not run: mlusim "
                         f"runs memory-core tasks only for kernels that ask __is_mpu() or __is_ipu() "
                         f"[{len(result.core_id_checks)} comparison(s) in this file]\n")
    return result.text


def compile_bang(o: Options, source: str, output: str, isa: int) -> None:
    """One .mlu file to a host object (through the cache)."""
    compile_unit(o, translate(o, source, isa), source, output)


#: every load and store of user code calls a check (mlusim_bang/access.h): GCC's kernel address sanitizer in its
#: call form, with no shadow memory, globals, stack or scope instrumentation (the checks need none of them)
CHECKED_ACCESSES = ["-fsanitize=kernel-address", "--param", "asan-instrumentation-with-call-threshold=0",
                    "--param", "asan-globals=0", "--param", "asan-stack=0", "-fno-sanitize-address-use-after-scope"]


#: what GCC's -Wall warns about in C++ and clang's (the real cncc's) does not: a .mlu file that builds with
#: `-Wall -Werror` under cncc must build here too (mlu-ops' kernels compare signed and unsigned sizes)
CLANG_WALL = {"-Wno-sign-compare": "-Wsign-compare", "-Wno-maybe-uninitialized": None,
              "-Wno-class-memaccess": None, "-Wno-strict-aliasing": None}


def clang_warnings(flags) -> list:
    """`flags` with the GCC-only -Wall warnings turned off after them, unless asked for by name (or, for
    -Wsign-compare, by -Wextra, as in clang)."""
    if "-Wall" not in flags:
        return list(flags)
    off = [quiet for quiet, loud in CLANG_WALL.items()
           if (loud or quiet.replace("-Wno-", "-W")) not in flags and not (loud and "-Wextra" in flags)]
    return list(flags) + off


def compile_unit(o: Options, text: str, source: str, output: str) -> None:
    """A rewritten unit to a host object (through the cache)."""
    cxx = host_compiler()
    flags = ([f"-std={o.std}", "-fPIC"] + clang_warnings([f for f in o.compiler if f not in ("-fno-exceptions",) and
                                                          not f.startswith("-fsanitize")]) + CHECKED_ACCESSES)
    if not any(f.startswith("-O") for f in flags):
        flags.append("-O2")
    key = hashlib.sha256("\0".join([text, cxx, _compiler_version(cxx)] + flags).encode()).hexdigest()
    cached = cache_dir() / key[:2] / f"{key}.o"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="cncc-") as work:
            unit = Path(work) / (Path(source).stem + ".mlu.ii")
            unit.write_text(text)
            partial = Path(work) / "out.o"
            done = _run([cxx, "-x", "c++-cpp-output", "-c", str(unit), "-o", str(partial)] + flags, o.verbose,
                        capture_output=True, text=True)
            if done.stderr:
                sys.stderr.write(done.stderr.replace(str(unit), source))
            if done.returncode:
                raise DriverError(None)
            os.replace(partial, cached)
    _copy(cached, output)


def _copy(source: Path, target: str) -> None:
    target_path = Path(target)
    if target_path.parent != Path(""):
        target_path.parent.mkdir(parents=True, exist_ok=True)
    partial = target_path.with_name(f".{target_path.name}.cncc-partial")
    shutil.copyfile(source, partial)
    os.replace(partial, target_path)


def write_dependencies(o: Options, source: str, output: Optional[str], isa: int) -> None:
    """-M/-MM to stdout (or -MF), or -MD/-MMD beside the object."""
    mode = o.depend_only or ("-MM" if "-MMD" in o.depend else "-M")
    command = preprocess_command(o, source, isa)
    command = command[:1] + [mode] + [a for a in command[1:] if a != "-E"]
    extra = [a for a in o.depend if a not in ("-MD", "-MMD")]
    if o.depend_only:
        if o.output and "-MF" not in extra:
            extra += ["-MF", o.output]
    else:
        if "-MF" not in extra:
            extra += ["-MF", str(Path(output).with_suffix(".d"))]
        if "-MT" not in extra and "-MQ" not in extra:
            extra += ["-MT", output]
    written = [extra[k + 1] for k, a in enumerate(extra[:-1]) if a == "-MF"]
    done = unicode_space.preprocess(command + extra, source,
                                    lambda c: _run(c, o.verbose, capture_output=True, text=True), written)
    if done.returncode:
        if done.stderr:
            sys.stderr.write(done.stderr)
        raise DriverError(None)
    if o.depend_only and not written:
        sys.stdout.write(done.stdout)


def _default_object(source: str) -> str:
    return Path(source).with_suffix(".o").name


def run(o: Options) -> None:
    isa = target_isa(o.arches)
    sources = [s for s in o.inputs if _is_bang(s, o.language)]
    for s in o.inputs:
        if not s.endswith(OBJECTS) and not os.path.exists(s):
            raise DriverError(f"no such file: {s}")
    if o.depend_only:
        for source in o.inputs:
            write_dependencies(o, source, None, isa)
        return
    if o.dlink:  # separable device linking: the device code is already in the host objects
        _empty_object(o.output or "a_dlink.o", o)
        return
    if o.mode == "preprocess":
        for source in sources:
            text = translate(o, source, isa)
            if o.output:
                Path(o.output).write_text(text)
            else:
                sys.stdout.write(text)
        return
    if o.mode == "assemble":  # the two-step form: cnas compiles this "assembly" (the rewritten unit)
        if len(sources) != 1:
            raise DriverError("-S takes one .mlu source")
        output = o.output or Path(sources[0]).with_suffix(".s").name
        flags = " ".join(shlex.quote(f) for f in o.compiler)
        Path(output).write_text(f"// mlusim BANG C unit {isa} {flags}\n"
                                + translate(o, sources[0], isa))
        return
    if o.mode == "compile":
        if o.output and len(o.inputs) > 1:
            raise DriverError("-o with -c takes one input file")
        for source in o.inputs:
            output = o.output or _default_object(source)
            if _is_bang(source, o.language):
                if o.depend:
                    write_dependencies(o, source, output, isa)
                compile_bang(o, source, output, isa)
            else:
                _host_compile(o, source, output)
        return
    # link: compile the sources to temporary objects, then link with the tree's libraries
    with tempfile.TemporaryDirectory(prefix="cncc-link-") as work:
        objects = []
        for index, source in enumerate(o.inputs):
            if source.endswith(OBJECTS):
                objects.append(source)
                continue
            output = str(Path(work) / f"{index}-{Path(source).stem}.o")
            if _is_bang(source, o.language):
                compile_bang(o, source, output, isa)
            else:
                _host_compile(o, source, output)
            objects.append(output)
        lib64 = library_dir()
        command = ([host_compiler()] + objects + ["-o", o.output or "a.out"] + o.linker
                   + [f"-L{lib64}", f"-Wl,-rpath,{lib64}", "-lcnrt"])
        done = _run(command, o.verbose)
        if done.returncode:
            raise DriverError(None)


def _host_compile(o: Options, source: str, output: str) -> None:
    command = ([host_compiler(), "-c", source, "-o", output, f"-std={o.std}"] + [f"-I{d}" for d in include_dirs()]
               + o.preprocessor + o.compiler + o.depend)
    if _run(command, o.verbose).returncode:
        raise DriverError(None)


def _empty_object(output: str, o: Options) -> None:
    with tempfile.TemporaryDirectory(prefix="cncc-") as work:
        empty = Path(work) / "empty.cpp"
        empty.write_text("")
        if _run([host_compiler(), "-c", "-fPIC", str(empty), "-o", output], o.verbose).returncode:
            raise DriverError(None)


def cnas_main(argv: Optional[Sequence[str]] = None) -> int:
    """cnas: assemble what `cncc -S --bang-device-only` wrote (`cnas [-i] k.s -o k.o`; other flags are ignored)."""
    args = list(sys.argv[1:] if argv is None else argv)
    source, output, i = None, None, 0
    while i < len(args):
        if args[i] in ("-o", "--output") and i + 1 < len(args):
            output, i = args[i + 1], i + 2
            continue
        if args[i] in ("-i", "--input") and i + 1 < len(args):
            source, i = args[i + 1], i + 2
            continue
        if args[i] in ("--mcpu", "--mlu-arch", "-mcpu") and i + 1 < len(args):
            i += 2
            continue
        if not args[i].startswith("-"):
            source = args[i]
        i += 1
    if source is None or output is None:
        print("cnas: error: usage: cnas [-i] input.s -o output.o", file=sys.stderr)
        return 1
    try:
        text = Path(source).read_text()
    except OSError as error:
        print(f"cnas: error: cannot read {source}: {error.strerror}", file=sys.stderr)
        return 1
    first, _, unit = text.partition("\n")
    if not first.startswith("// mlusim BANG C unit "):
        print(f"cnas: error: {source} was not written by mlusim's cncc -S", file=sys.stderr)
        return 1
    flags = shlex.split(first.split(" ", 6)[6]) if first.count(" ") >= 6 else []
    o = Options(compiler=flags)
    try:
        compile_unit(o, unit, source, output)
    except DriverError:
        return 1
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """cncc's entry point: exit status 0 on success, 1 with the diagnostics on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"], ["-v"]):
        print(VERSION, _compiler_version(host_compiler()))
        return 0
    try:
        run(parse(args))
    except CompileError as error:
        print(error, file=sys.stderr)
        return 1
    except DriverError as error:
        if error.args and error.args[0]:
            print(f"cncc: error: {error.args[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
