"""cncc's command line: objects, executables launching through <<<>>> / cnrtInvokeKernel / the v4 params buffer,
compile errors at the user's file and line, dependency files, response files, the two-step -S + cnas form."""
from __future__ import annotations

import os
import subprocess

import pytest

from neuware.bangc import driver, rewrite

from .conftest import SAMPLES, SOURCES, cncc


def test_launch_forms_from_cpp(tmp_path, library_dir):
    program = tmp_path / "launch"
    cncc(SOURCES / "launch.mlu", "-o", program, "-O1", "-std=c++14")
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "status 0 wrong 0 first 15"
    assert lines[1].startswith("trap 100132 ") and "outside its allocation" in lines[1]


def test_unknown_intrinsic_is_an_error_at_the_users_line(tmp_path):
    done = cncc("-c", SOURCES / "bad_intrinsic.mlu", "-o", tmp_path / "x.o", check=False)
    assert done.returncode == 1
    assert "bad_intrinsic.mlu:5" in done.stderr and "__bang_no_such_intrinsic" in done.stderr


def test_inline_assembly_is_refused_naming_it(tmp_path):
    done = cncc("-c", SOURCES / "inline_asm.mlu", "-o", tmp_path / "x.o", check=False)
    assert done.returncode == 1
    assert "inline_asm.mlu:4: error: inline assembly ('findlast1.gpr.b32 %[dst], %[src]') is not simulated" \
        in done.stderr


def test_depfile_response_file_and_cache(tmp_path):
    cache = tmp_path / "cache"
    header = tmp_path / "tile.mluh"
    header.write_text("#define TILE 256\n")
    source = tmp_path / "k.mlu"
    source.write_text('#include "tile.mluh"\n__mlu_global__ void k(float *x) { __nram__ float t[TILE]; '
                      '__memcpy(t, x, 4, GDRAM2NRAM); }\n')
    rsp = tmp_path / "flags.rsp"
    rsp.write_text(f'-c "{source}" -o "{tmp_path / "k.o"}" -MD -O2 -I "{tmp_path}"\n')
    env = dict(os.environ, MLUSIM_CNCC_CACHE=str(cache))
    done = subprocess.run([driver.sys.executable, "-m", "mlutools.cli", "cncc", f"@{rsp}"], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k.o").stat().st_size > 0
    deps = (tmp_path / "k.d").read_text()
    assert str(header) in deps and deps.startswith(f"{tmp_path / 'k.o'}:")
    cached = list(cache.rglob("*.o"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    done = subprocess.run([driver.sys.executable, "-m", "mlutools.cli", "cncc", f"@{rsp}"], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and cached[0].stat().st_mtime_ns == stamp  # from the cache
    header.write_text("#define TILE 512\n")  # a header change is a new unit
    done = subprocess.run([driver.sys.executable, "-m", "mlutools.cli", "cncc", f"@{rsp}"], env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and len(list(cache.rglob("*.o"))) == 2


def test_dependencies_only(tmp_path):
    done = cncc("-MM", SAMPLES / "vector_add.mlu", "-MT", "vadd.o")
    assert done.stdout.startswith("vadd.o:") and "vector_add.mlu" in done.stdout


def test_two_step_assemble_then_cnas(tmp_path):
    assembly = tmp_path / "k.s"
    cncc("-S", "--bang-device-only", SAMPLES / "vector_add.mlu", "-o", assembly, "-O1")
    assert assembly.read_text().startswith("// mlusim BANG C unit 372 -O1")
    assert driver.cnas_main(["-i", str(assembly), "-o", str(tmp_path / "k.o")]) == 0
    assert (tmp_path / "k.o").stat().st_size > 0
    assert driver.cnas_main([str(tmp_path / "missing.s"), "-o", str(tmp_path / "m.o")]) == 1


@pytest.mark.parametrize("argv, message", [
    (["-c"], "no input files"),
    (["--bang-mlu-arch=mtp_999", "x.mlu"], "unknown MLU architecture 'mtp_999'"),
    (["-std=c89", "x.mlu"], "BANG C is C++"),
    (["--frobnicate", "x.mlu"], "unknown option '--frobnicate'"),
    (["@/no/such/file.rsp"], "cannot read response file"),
])
def test_bad_command_lines(argv, message):
    with pytest.raises(driver.DriverError, match=message):
        driver.parse(argv)


def test_arch_choice_prefers_the_simulated_board():
    assert driver.target_isa([220, 270, 290, 372, 592]) == 372
    assert driver.target_isa([592]) == 592
    assert "-D__MLU_NRAM_SIZE__=768" in driver.arch_macros(372)


def test_rewriter_keeps_line_numbers_and_polls_loops():
    source = ('# 1 "k.mlu"\n__nram__ char buf[64];\n__mlu_global__ void k(char *p) {\n'
              '  for (int i = 0; i < 4; ++i) buf[i] = p[i];\n  do { } while (0);\n}\n')
    result = rewrite.rewrite(source)
    assert result.kernels == ["k"]
    assert result.text.count("\n") == source.count("\n") + 1
    assert result.text.count("__mlu_loop_poll") == 2
    assert "buf[" not in result.text.split("\n")[4]  # the use goes through the accessor


def test_nram_pointer_declaration_is_refused():
    with pytest.raises(rewrite.CompileError, match="k.mlu:1: error: a pointer declared"):
        rewrite.rewrite('# 1 "k.mlu"\n__nram__ float *p;\n')


def test_find_package_bang_builds_a_library_and_an_executable(tmp_path, library_dir):
    import shutil
    if shutil.which("cmake") is None:
        pytest.skip("no cmake on this machine")
    from neuware import tree
    neuware_home = tree.make_tree(tmp_path / "neuware")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copyfile(SAMPLES / "vector_add.mlu", project / "vector_add.mlu")
    shutil.copyfile(SOURCES / "launch.mlu", project / "launch.mlu")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(bang_sample CXX)\n"
        'list(APPEND CMAKE_MODULE_PATH "$ENV{NEUWARE_HOME}/cmake")\nfind_package(BANG REQUIRED)\n'
        "set(BANG_CNCC_FLAGS -O1 -std=c++14 --bang-mlu-arch=mtp_372)\nbang_add_library(vadd SHARED vector_add.mlu)\n"
        "bang_add_executable(launch launch.mlu)\n")
    env = dict(os.environ, NEUWARE_HOME=str(neuware_home))
    for command in (["cmake", "-S", str(project), "-B", str(project / "build")],
                    ["cmake", "--build", str(project / "build")]):
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
        assert done.returncode == 0, done.stdout + done.stderr
    from neuware import bangc
    assert "vector_add" in bangc.load(project / "build" / "libvadd.so").kernels
    done = subprocess.run([str(project / "build" / "launch")], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "status 0 wrong 0 first 15"


def test_wall_warns_as_clang_does(tmp_path):
    """-Wall -Werror: a signed/unsigned comparison is no error (clang's -Wall, the real cncc's, has no
    -Wsign-compare), unless -Wextra or -Wsign-compare asks for it."""
    source = tmp_path / "sizes.mlu"
    source.write_text("#include <bang.h>\n__mlu_global__ void k(int *y, unsigned n) {\n"
                      "  for (int i = 0; i < n; ++i) y[i] = i;\n}\n")
    cncc("-c", source, "-o", tmp_path / "a.o", "-Wall", "-Werror")
    for extra in ("-Wextra", "-Wsign-compare"):
        done = cncc("-c", source, "-o", tmp_path / "b.o", "-Wall", "-Werror", extra, check=False)
        assert done.returncode == 1 and "sizes.mlu:3" in done.stderr and "sign-compare" in done.stderr
    assert driver.clang_warnings(["-O2"]) == ["-O2"]
