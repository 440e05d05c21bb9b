"""The torch.compile on mlu benchmark suite (mlutools.bench.bench_compile); the same as `mlusim bench compile`.

Run: python benchmarks/bench_compile.py [--quick]
"""
import sys

from mlutools.bench.bench_compile import main

if __name__ == "__main__":
    sys.exit(main())
