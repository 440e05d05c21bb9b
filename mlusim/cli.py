"""The `mlusim` command: `info` (a device monitor's view), `bench` (the benchmark suites), `run` (N ranks)."""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Callable, Optional, Sequence

from . import arch
from . import device as devices

#: Benchmark suites, by name -> file in the repository's benchmarks/ folder.
SUITES = {
    "runtime": "bench_runtime.py",
    "cnnl": "bench_cnnl.py",
    "kernels": "bench_cnnl_kernels.py",
    "bang": "bench_bang.py",
    "cncl": "bench_cncl.py",
}
DEFAULT_SUITES = ("runtime", "cnnl", "bang")


def _mib(nbytes: int) -> str:
    return f"{nbytes / 2**20:,.0f} MiB"


def info_lines() -> list[str]:
    """The device table `mlusim info` prints."""
    config = devices.current_config()
    table = devices.devices()
    lines = [f"mlusim: {len(table)} simulated device(s), board {config.arch}"
             f"{', blocking mode' if config.blocking else ''}", ""]
    header = f"{'Card':>4}  {'Name':<10} {'ISA':>4} {'Clusters':>8} {'Cores':>5} {'Clock':>8} " \
             f"{'Memory used / total':>27} {'Bandwidth':>11} {'Queues':>6} {'Busy':>4}"
    lines += [header, "-" * len(header)]
    for device in table:
        spec = device.spec
        free, total = device.memory.info()
        lines.append(
            f"{device.index:>4}  {spec.name:<10} {spec.isa:>4} {spec.cluster_count:>8} {spec.core_count:>5} "
            f"{spec.clock_hz / 1e9:>5.2f}GHz {_mib(total - free) + ' / ' + _mib(total):>27} "
            f"{spec.gdram_bandwidth / 1e9:>7.1f}GB/s {len(device.queues()):>6} {'yes' if device.busy() else 'no':>4}")
    spec = config.spec
    lines += ["", f"per core: NRAM {spec.nram_bytes // 1024} KiB, WRAM {spec.wram_bytes // 1024} KiB; "
                  f"per cluster: SRAM {spec.sram_bytes // 1024} KiB; L2 {spec.l2_bytes // 2**20} MiB; "
                  f"compute capability {spec.compute_capability[0]}.{spec.compute_capability[1]}",
              "peak (modelled): " + ", ".join(f"{dtype} {spec.peak_ops(dtype) / 1e12:.1f} T"
                                              for dtype in spec.macs_per_cycle),
              f"boards: {', '.join(arch.BOARDS)} (choose with MLUSIM_ARCH)"]
    return lines


def benchmarks_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "benchmarks"


def load_suite(name: str) -> Callable:
    """The `run(report=...)` function of a benchmark suite file."""
    path = benchmarks_dir() / SUITES[name]
    if not path.exists():
        raise FileNotFoundError(f"benchmark suite {name!r} not found at {path}")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(f"mlusim_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run


def bench(suites: Sequence[str], output: Optional[Path]) -> int:
    results = {}
    for name in suites:
        print(f"== {name} ==", flush=True)
        rows = load_suite(name)(report=lambda line: print(line, flush=True))
        results[name] = rows
        print(flush=True)
    failed = [(suite, row.get("name", "?")) for suite, rows in results.items() for row in rows
              if row.get("pass") is False]
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=1, default=str))
        print(f"results written to {output}")
    print(f"{sum(len(r) for r in results.values())} measurements, {len(failed)} below target"
          + (": " + ", ".join(f"{s}/{n}" for s, n in failed) if failed else ""))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="mlusim", description="A software Cambricon MLU.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="print the simulated devices, like a device monitor")
    bench_parser = commands.add_parser("bench", help="run benchmark suites and print their tables")
    bench_parser.add_argument("suites", nargs="*", default=list(DEFAULT_SUITES),
                              help=f"suites to run (default: {' '.join(DEFAULT_SUITES)}; all: {' '.join(SUITES)})")
    bench_parser.add_argument("--board", help="simulated board (default: MLUSIM_ARCH or MLU370-X4)")
    bench_parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    run_parser = commands.add_parser("run", help="start N ranks of a script, like torchrun")
    run_parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    if args.command == "info":
        print("\n".join(info_lines()))
        return 0
    if args.command == "bench":
        unknown = [s for s in args.suites if s not in SUITES]
        if unknown:
            parser.error(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
        if args.board:
            os.environ["MLUSIM_ARCH"] = arch.board(args.board).name
            devices.configure()
        return bench(args.suites, args.json)
    from . import launcher
    return launcher.main(args.rest)


if __name__ == "__main__":
    sys.exit(main())
