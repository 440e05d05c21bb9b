"""The runtime benchmark suite (mlutools.bench.bench_runtime); the same as `mlusim bench runtime`.

Run: python benchmarks/bench_runtime.py
"""
from mlutools.bench.bench_runtime import main

if __name__ == "__main__":
    main()
