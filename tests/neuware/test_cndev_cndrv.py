"""cndev.h and cn_api.h from C (programs/cndev_cndrv.c): CNDev's device queries and CNDrv's devices, contexts and
memory agree with cnrt.h on the same simulated devices, and bad calls get their status codes."""


def test_cndev_and_cndrv_program(programs):
    result = programs.run("cndev_cndrv.c")
    assert "0 failure(s)" in result.stdout


def test_two_devices(programs):
    """Device ordinals and handles past the first device (MLUSIM_DEVICES=2)."""
    from .conftest import clean_environment
    result = programs.run("cndev_cndrv.c", env=clean_environment(MLUSIM_DEVICES="2"))
    assert "0 failure(s)" in result.stdout


def test_context_configuration_and_memory_attributes(programs):
    """programs/cndrv_config.c: cnGetCtxConfigParam / cnSetCtxConfigParam (board defaults, per context, the two
    settings agree), cnGetCtxMaxParallelUnionTasks, cnQueueGetContext, cnMallocConstant, cnGetMemAttribute."""
    result = programs.run("cndrv_config.c")
    assert "0 failure(s)" in result.stdout, result.stdout


def test_board_figures(programs):
    """programs/cndev_figures.c: cndevGetDDRInfo, cndevGetFrequencyInfo, cndevGetDeviceMaxPerformance agree with
    CNRT's attributes of the same board; version kept; bad arguments."""
    result = programs.run("cndev_figures.c")
    assert "0 failure(s)" in result.stdout, result.stdout


def test_libcnrt_brings_cndrv_as_the_real_one_does(library_dir, tmp_path):
    """libcnrt.so lists libcndrv.so as a dependency (the real one is built on CNDrv): a back end linked with -lcnrt
    alone that calls cn_api.h (DIOPI's camb: cnCtxGetCurrent, cnGetCtxConfigParam) loads and runs."""
    import subprocess

    from neuware import cdecl

    from .conftest import clean_environment, compiler
    backend = tmp_path / "backend.c"
    backend.write_text('#include <cn_api.h>\n#include <cnrt.h>\n'
                       'int visible_clusters(void) {\n'
                       '  CNcontext context; CNctxConfigParam param;\n'
                       '  if (cnCtxGetCurrent(&context) != CN_SUCCESS) return -1;\n'
                       '  if (cnGetCtxConfigParam(context, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, &param) != CN_SUCCESS)'
                       ' return -2;\n'
                       '  return (int)param.visibleClusterNumber;\n}\n')
    program = tmp_path / "loader.c"
    program.write_text('#include <dlfcn.h>\n#include <stdio.h>\n#include <cnrt.h>\n'
                       'int main(int argc, char **argv) {\n'
                       '  cnrtSetDevice(0);\n'
                       '  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n'
                       '  if (!library) { printf("dlopen: %s\\n", dlerror()); return 1; }\n'
                       '  int (*query)(void) = (int (*)(void))dlsym(library, "visible_clusters");\n'
                       '  int clusters; cnrtDeviceGetAttribute(&clusters, cnrtAttrClusterCount, 0);\n'
                       '  printf("%d %d\\n", query(), clusters);\n  return 0;\n}\n')
    flags = [f"-I{cdecl.INCLUDE_DIR}", f"-L{library_dir}", f"-Wl,-rpath,{library_dir}"]
    shared = tmp_path / "libbackend.so"
    for command in ([compiler(False), "-shared", "-fPIC", str(backend), "-o", str(shared), *flags, "-lcnrt"],
                    [compiler(False), str(program), "-o", str(tmp_path / "loader"), *flags, "-lcnrt", "-ldl"]):
        built = subprocess.run(command, capture_output=True, text=True, timeout=180)
        assert built.returncode == 0, built.stderr
    done = subprocess.run([str(tmp_path / "loader"), str(shared)], capture_output=True, text=True, timeout=120,
                          env=clean_environment())
    assert done.returncode == 0, done.stdout + done.stderr
    found, clusters = map(int, done.stdout.split())
    assert found == clusters > 0
