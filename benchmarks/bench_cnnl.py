"""The cnnl benchmark suite (mlutools.bench.bench_cnnl); the same as `mlusim bench cnnl`.

Run: python benchmarks/bench_cnnl.py
"""
from mlutools.bench.bench_cnnl import main

if __name__ == "__main__":
    main()
