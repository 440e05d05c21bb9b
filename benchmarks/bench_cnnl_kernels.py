"""The kernels benchmark suite (mlutools.bench.bench_cnnl_kernels); the same as `mlusim bench kernels`.

Run: python benchmarks/bench_cnnl_kernels.py
"""
from mlutools.bench.bench_cnnl_kernels import main

if __name__ == "__main__":
    main()
