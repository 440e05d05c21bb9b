"""The sanitizer's cost (mlutools.bench.bench_sanitizer); the same as `mlusim bench sanitizer`.

Run: python benchmarks/bench_sanitizer.py
"""
from mlutools.bench.bench_sanitizer import main

if __name__ == "__main__":
    main()
