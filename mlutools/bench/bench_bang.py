"""Benchmarks of mlusim.bang kernels: vector add vs numpy, launch overhead, compile time and the on-disk cache.

Run: python benchmarks/bench_bang.py     (or run(report=print) -> list of result rows)
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np


import cnrt  # noqa: E402
import mlusim.device  # noqa: E402
from mlutools.bench.common import median_time, reported, row  # noqa: E402
from mlusim import bang  # noqa: E402
from cnrt.samples.vector_add import union1_dim, vector_add  # noqa: E402


@bang.kernel
def empty_kernel(ctx):
    pass


def bench_vector_add(n: int = 1 << 24) -> dict:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    z = np.empty_like(x)
    ptrs = [cnrt.malloc(n * 4) for _ in range(3)]
    cnrt.memcpy(ptrs[0], x, n * 4, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpy(ptrs[1], y, n * 4, cnrt.cnrtMemcpyHostToDev)
    queue = cnrt.queueCreate()
    dim = union1_dim()

    def ours():
        vector_add[dim, cnrt.cnrtFuncTypeUnion1, queue](ptrs[0], ptrs[1], ptrs[2], n)
        cnrt.queueSync(queue)

    ours_s, _ = median_time(ours)
    numpy_s, _ = median_time(lambda: np.add(x, y, out=z))
    cnrt.memcpy(z, ptrs[2], n * 4, cnrt.cnrtMemcpyDevToHost)
    assert np.array_equal(z, x + y)
    for ptr in ptrs:
        cnrt.free(ptr)
    return row(f"vector add 2^{n.bit_length() - 1} f32, Union1 x {dim.x * dim.y} cores", ours_s * 1e3,
               numpy_s * 1e3, 2.0, note="reference: np.add")


def bench_launch_overhead(launches: int = 300) -> dict:
    queue = cnrt.queueCreate()
    dim = union1_dim()

    def launch():
        empty_kernel[dim, cnrt.cnrtFuncTypeUnion1, queue]()
        cnrt.queueSync(queue)

    median_us = median_time(launch, repeats=launches, warmup=20)[0] * 1e6
    return row(f"empty kernel launch + sync, {dim.x * dim.y} tasks", median_us, 1.0, 200.0, unit="us",
               note="absolute target: median <= 200 us")


_COMPILE_PROBE = textwrap.dedent('''
    import json, sys
    import mlusim.device
    from mlusim import bang
    import probe_kernel
    device = mlusim.device.configure(arch="MLU370-X4", memory=64 << 20)[0]
    import cnrt
    out = cnrt.malloc(4 * 64)
    queue = cnrt.queueCreate()
    probe_kernel.scaled_copy[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](out, out, 64)
    cnrt.queueSync(queue)
    record = probe_kernel.scaled_copy.compiles[-1]
    print(json.dumps({"seconds": record.seconds, "from_cache": record.from_cache}))
''')

_PROBE_KERNEL = textwrap.dedent('''
    from mlusim import bang

    @bang.kernel
    def scaled_copy(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), n: int):
        tile = bang.nram(ctx, "tile", bang.float32, 64)
        bang.memcpy(ctx, tile, x, n * 4, bang.GDRAM2NRAM)
        bang.mul_scalar(ctx, tile, tile, 2.0 + {salt}, n)
        bang.memcpy(ctx, y, tile, n * 4, bang.NRAM2GDRAM)
''')


def bench_compile_cache() -> dict:
    """A never-seen kernel compiled in a fresh process, then loaded from the on-disk cache by a second process."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "probe_kernel.py").write_text(_PROBE_KERNEL.format(salt=time.time_ns() % 1000))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([folder, os.environ.get("PYTHONPATH", "")]))
        runs = []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, capture_output=True, text=True,
                                  check=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    ok = (not first["from_cache"]) and second["from_cache"]
    result = row("new kernel: compile (1st process) vs cache (2nd)", second["seconds"], first["seconds"], None,
                 unit="s", note=f"compile {first['seconds']:.2f} s, cached load {second['seconds']:.2f} s")
    result["pass"] = ok
    return result


def run(report=print) -> list[dict]:
    mlusim.device.configure(arch="MLU370-X4", memory=1 << 30)
    try:
        rows = [bench_vector_add(), bench_launch_overhead(), bench_compile_cache()]
    finally:
        mlusim.device.configure()
    return reported(rows, report)


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
