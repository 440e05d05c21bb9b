"""The bang benchmark suite (mlutools.bench.bench_bang); the same as `mlusim bench bang`.

Run: python benchmarks/bench_bang.py
"""
from mlutools.bench.bench_bang import main

if __name__ == "__main__":
    main()
