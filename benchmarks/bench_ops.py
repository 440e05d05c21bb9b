"""The ops benchmark suite (mlusim.bench.suite); the same as `mlusim bench ops`.

Run: python benchmarks/bench_ops.py
"""
from mlusim.bench.suite import main

if __name__ == "__main__":
    main()
