"""The start-up benchmark (mlutools/bench/capi_startup.py) runs: its C program makes each library's first call the
process's first and reports the time, and the cold-cache eviction covers the files a start-up reads."""
from mlutools.bench import capi_startup

from tests.neuware.conftest import compiler


def test_first_calls_are_measured(library_dir, tmp_path):
    compiler(False)
    program = capi_startup.compile_program(tmp_path, library_dir)
    figures = capi_startup.measure(program, rounds=1)
    assert set(figures) == {"python", *capi_startup.LIBRARIES}
    for library in capi_startup.LIBRARIES:
        assert 0 < figures[library]["first"] < 60, library
    assert 0 < figures["cnnl"]["first_op_float"] < 60 and 0 < figures["cnnl"]["first_op_half"] < 60


def test_eviction_lists_the_start_up_files(library_dir, tmp_path):
    files = capi_startup.startup_files(library_dir)
    names = "\n".join(files)
    for part in ("numpy", "cnrt/__init__.py", "cnnl/__init__.py", "libcnrt.so", "_cffi_backend"):
        assert part in names, part
    scratch = tmp_path / "file"
    scratch.write_bytes(b"x" * 4096)
    assert capi_startup.evict([str(scratch), str(tmp_path / "missing")]) == 1
