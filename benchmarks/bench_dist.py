"""The torch.distributed benchmark suite (mlusim.bench.bench_dist); the same as `mlusim bench dist`.

Run: python benchmarks/bench_dist.py
"""
from mlusim.bench.bench_dist import main

if __name__ == "__main__":
    main()
