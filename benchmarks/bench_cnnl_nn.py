"""The nn benchmark suite (mlutools.bench.bench_cnnl_nn); the same as `mlusim bench nn`.

Run: python benchmarks/bench_cnnl_nn.py
"""
from mlutools.bench.bench_cnnl_nn import main

if __name__ == "__main__":
    main()
