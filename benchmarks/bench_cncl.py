"""The cncl benchmark suite (mlusim.bench.bench_cncl); the same as `mlusim bench cncl`.

Run: python benchmarks/bench_cncl.py
"""
from mlusim.bench.bench_cncl import main

if __name__ == "__main__":
    main()
