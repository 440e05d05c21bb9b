"""The kernel table of each cncc-built object, read by neuware.bangc.registry: objects built from the same sources and
loaded into one process each list and run their own kernels."""
from __future__ import annotations

import numpy as np

import cnrt
from neuware import bangc

from .conftest import SAMPLES, cncc


def test_two_objects_with_the_same_kernel_each_list_it(tmp_path, library_dir):
    first, second = tmp_path / "libfirst.so", tmp_path / "libsecond.so"
    for library in (first, second):
        cncc("-shared", "-O1", "--bang-mlu-arch=mtp_372", SAMPLES / "vector_add.mlu", "-o", library)
    modules = [bangc.load(first), bangc.load(second)]
    for module, library in zip(modules, (first, second)):
        assert module["vector_add"].info.path == str(library.resolve())
    assert modules[0]["vector_add"].info.entry != modules[1]["vector_add"].info.entry
    x = np.arange(100, dtype=np.float32)
    px, pz = cnrt.malloc(x.nbytes), cnrt.malloc(x.nbytes)
    cnrt.memcpy(px, x, x.nbytes, cnrt.cnrtMemcpyHostToDev)
    queue = cnrt.queueCreate()
    modules[1]["vector_add"][(2, 1, 1), cnrt.cnrtFuncTypeBlock, queue](px, px, pz, x.size)
    cnrt.queueSync(queue)
    out = np.empty_like(x)
    cnrt.memcpy(out, pz, x.nbytes, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(out, 2 * x)
    for pointer in (px, pz):
        cnrt.free(pointer)
