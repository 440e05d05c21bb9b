"""The MagicMind benchmark suite (mlutools.bench.bench_magicmind); the same as `mlusim bench magicmind`.

Run: python benchmarks/bench_magicmind.py [--quick]
"""
import sys

from mlutools.bench.bench_magicmind import main

if __name__ == "__main__":
    sys.exit(main())
