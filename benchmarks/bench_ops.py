"""The ops benchmark suite (mlutools.bench.suite); the same as `mlusim bench ops`.

Run: python benchmarks/bench_ops.py
"""
from mlutools.bench.suite import main

if __name__ == "__main__":
    main()
