"""The native mlu op benchmark suite (mlutools.bench.bench_ops_torch); the same as `mlusim bench ops-torch`.

Run: python benchmarks/bench_ops_torch.py [--quick] [--conformance-csv F]
"""
import sys

from mlutools.bench.bench_ops_torch import main

if __name__ == "__main__":
    sys.exit(main())
