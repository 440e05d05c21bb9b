"""The runtime benchmark suite (mlusim.bench.bench_runtime); the same as `mlusim bench runtime`.

Run: python benchmarks/bench_runtime.py
"""
from mlusim.bench.bench_runtime import main

if __name__ == "__main__":
    main()
