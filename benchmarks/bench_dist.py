"""The torch.distributed benchmark suite (mlutools.bench.bench_dist); the same as `mlusim bench dist`.

Run: python benchmarks/bench_dist.py
"""
from mlutools.bench.bench_dist import main

if __name__ == "__main__":
    main()
