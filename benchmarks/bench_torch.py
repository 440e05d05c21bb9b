"""The torch benchmark suite (mlutools.bench.bench_torch); the same as `mlusim bench torch`.

Run: python benchmarks/bench_torch.py [--quick]
"""
import sys

from mlutools.bench.bench_torch import main

if __name__ == "__main__":
    sys.exit(main())
