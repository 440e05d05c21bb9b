"""The C ABI benchmark suite (mlutools.bench.bench_capi); the same as `mlusim bench capi`.

Run: python benchmarks/bench_capi.py
"""
from mlutools.bench.bench_capi import main

if __name__ == "__main__":
    main()
