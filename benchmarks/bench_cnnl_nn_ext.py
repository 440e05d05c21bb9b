"""The part 3 neural-network op benchmark suite (mlutools.bench.bench_cnnl_nn_ext); the same as `mlusim bench nn-ext`.

Run: python benchmarks/bench_cnnl_nn_ext.py
"""
from mlutools.bench.bench_cnnl_nn_ext import main

if __name__ == "__main__":
    main()
