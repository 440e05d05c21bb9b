"""The cncl benchmark suite (mlutools.bench.bench_cncl); the same as `mlusim bench cncl`.

Run: python benchmarks/bench_cncl.py
"""
from mlutools.bench.bench_cncl import main

if __name__ == "__main__":
    main()
