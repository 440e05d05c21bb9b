"""The `mlusim` command: `info` (a device monitor's view), `bench` (the benchmark suites), `run` (N ranks),
`neuware` (the C ABI's headers and libraries), `cncc` (the BANG C compiler), `kernels` (the numba kernels torch.compile generated for mlu)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from mlusim import arch
from mlusim import device as devices

from .bench import DEFAULT_SUITES, SUITES, suite_module


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


def _csv_list(text: Optional[str]) -> Optional[list[str]]:
    return None if text is None else [part for part in text.split(",") if part.strip()]


def _say(line: str) -> None:
    print(line, flush=True)


def bench(args) -> int:
    """`mlusim bench`: run the chosen suites; the ops suite takes the op/size/repeat options and writes the CSV,
    JSON and plot outputs."""
    from .bench import report as report_module
    results: dict[str, list[dict]] = {}
    for name in args.suites:
        if len(args.suites) > 1:
            _say(f"== {name} ==")
        if name == "ops":
            results[name] = suite_module(name).run(report=_say, ops=_csv_list(args.ops), sizes=_csv_list(args.sizes),
                                             repeats=args.repeats, warmup=args.warmup,
                                             collectives=args.collectives, progress=not args.no_progress)
        else:
            results[name] = suite_module(name).run(report=_say)
        _say("")
    ops_rows = results.get("ops", [])
    meta = {"board": devices.current_config().arch, "suites": list(results), "sizes": args.sizes,
            "repeats": args.repeats, "warmup": args.warmup}
    if args.csv:
        _say(f"CSV written to {report_module.write_csv(ops_rows, args.csv)}")
    if args.json:
        _say(f"JSON written to {report_module.write_json(results, args.json, meta)}")
    if args.plot:
        written = report_module.write_plot(ops_rows, args.plot, f"mlusim bench on {meta['board']}: modelled MLU "
                                                                f"time vs host time")
        _say(f"plot written to {written}" if written else "plot skipped: matplotlib not installed "
                                                          "(pip install 'mlusim[plot]')")
    failed = [(suite, row.get("name", "?")) for suite, rows in results.items() for row in rows
              if row.get("pass") is False]
    _say(f"{sum(len(r) for r in results.values())} measurements"
         + (f", {len(failed)} below target: " + ", ".join(f"{s}/{n}" for s, n in failed) if failed else ""))
    return 0


def _add_bench_parser(commands) -> argparse.ArgumentParser:
    parser = commands.add_parser(
        "bench", help="benchmark every op: host time and modelled MLU time, as a table (and CSV, JSON, plot)",
        description="Benchmark suites. The default suite, ops, runs every cnnl op (and memcpy, a BANG kernel, "
                    "collectives with --collectives) and prints host time, modelled MLU time (an estimate) and "
                    "the ratio to numpy.")
    parser.add_argument("suites", nargs="*", default=list(DEFAULT_SUITES),
                        help=f"suites to run (default: {' '.join(DEFAULT_SUITES)}; all: {' '.join(SUITES)})")
    parser.add_argument("--ops", help="ops suite: comma-separated op names or parts of them (e.g. matmul,add)")
    parser.add_argument("--sizes", default="small,medium", help="ops suite: comma-separated of small, medium, "
                                                                "large (default small,medium)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per measurement (median; default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs before them (default 2)")
    parser.add_argument("--collectives", action="store_true", help="ops suite: add cncl allReduce over 2 devices")
    parser.add_argument("--hosts", action="store_true", help="cncl suite: across simulated hosts instead (the "
                                                             "cncl-hosts suite: network namespaces, MPI)")
    parser.add_argument("--board", help="simulated board (default: MLUSIM_ARCH or MLU370-X4)")
    parser.add_argument("--csv", type=Path, help="write the ops table to this CSV file")
    parser.add_argument("--json", type=Path, help="write all results to this JSON file")
    parser.add_argument("--plot", type=Path, help="write a PNG plot of modelled vs host time (needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return parser


def add_conformance_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `mlusim conformance torch` (here, so the command line parses without importing torch)."""
    parser.add_argument("--ops", help="comma-separated OpInfo names (full names such as div.floor_rounding, or "
                                      "names: all their variants); default: all of torch's op_db")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds an op may take before it counts as a hang (default 300)")
    parser.add_argument("--csv", help="write the per-op table to this CSV file")
    parser.add_argument("--json", help="write the per-op results (every sample) and totals to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def add_cambricon_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `mlusim conformance torch_mlu PATH`."""
    parser.add_argument("path", help="a checkout of Cambricon/torch_mlu, or its test/ folder (nothing is fetched)")
    parser.add_argument("--folders", default="mlu,torch,storage,torch_ops",
                        help="comma-separated folders of test/ (default: mlu,torch,storage,torch_ops)")
    parser.add_argument("--files", help="only the files whose path under test/ contains this text")
    parser.add_argument("--jobs", type=int, default=1, help="files run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a file may take (default 900)")
    parser.add_argument("--case-timeout", type=float, default=300.0,
                        help="seconds one case may take (default 300)")
    parser.add_argument("--skips", help="a JSON file of more cases to skip: {suite id or its prefix: reason}")
    parser.add_argument("--json", help="write every case's outcome and message to this JSON file")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="mlusim", description="A software Cambricon MLU.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="print the simulated devices, like a device monitor")
    bench_parser = _add_bench_parser(commands)
    conformance_parser = commands.add_parser(
        "conformance", help="PyTorch's OpInfo tests on the mlu device: a per-op table of samples passed, xfail, "
                            "fell back to the CPU, failed")
    conformance_suites = conformance_parser.add_subparsers(dest="suite", required=True)
    torch_parser = conformance_suites.add_parser("torch", help="torch's op_db on mlu against the CPU (needs torch)")
    add_conformance_arguments(torch_parser)
    cambricon_parser = conformance_suites.add_parser(
        "torch_mlu", help="Cambricon's torch_mlu test suite from a checkout (needs torch and pandas)")
    add_cambricon_arguments(cambricon_parser)
    run_parser = commands.add_parser("run", help="start N ranks of a script, like torchrun")
    run_parser.add_argument("rest", nargs=argparse.REMAINDER)
    commands.add_parser("neuware", help="a Neuware-like tree (C headers, libcnrt/libcnnl/libcncl.so) or its flags",
                        add_help=False)
    commands.add_parser("cncc", help="the BANG C compiler driver: build .mlu kernels that run on the simulated MLU",
                        add_help=False)
    commands.add_parser("kernels", help="run a script; print or write the numba kernels torch.compile generated "
                                        "for mlu", add_help=False)
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["run"]:  # everything after `run` belongs to the launcher (argparse would eat -n)
        from . import run as launcher
        return launcher.main(arguments[1:])
    if arguments[:1] == ["neuware"]:
        from neuware import tree as neuware
        return neuware.main(arguments[1:])
    if arguments[:1] == ["cncc"]:  # cncc's own command line follows
        from neuware.bangc import driver as cncc
        return cncc.main(arguments[1:])
    if arguments[:1] == ["kernels"]:  # the script's own options follow it
        from torch_mlu._inductor import cli as kernels_cli
        return kernels_cli.main(arguments[1:])
    args = parser.parse_args(arguments)

    if args.command == "info":
        print("\n".join(info_lines()))
        return 0
    if args.command == "conformance" and args.suite == "torch_mlu":
        from torch_mlu.conformance import cambricon_cli
        return cambricon_cli.main(args)
    if args.command == "conformance":
        try:
            from torch_mlu.conformance import cli as conformance_cli
        except ImportError as error:
            print(f"mlusim conformance torch needs torch (pip install 'mlusim[torch]'): {error}", file=sys.stderr)
            return 2
        return conformance_cli.main(args)
    if args.command == "bench":
        if args.hosts:
            args.suites = ["cncl-hosts" if suite == "cncl" else suite for suite in args.suites]
        unknown = [s for s in args.suites if s not in SUITES]
        if unknown:
            bench_parser.error(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
        if args.repeats < 1 or args.warmup < 0:
            bench_parser.error("--repeats must be >= 1 and --warmup >= 0")
        if args.board:
            try:
                os.environ["MLUSIM_ARCH"] = arch.board(args.board).name
            except KeyError as error:
                bench_parser.error(str(error.args[0]))
            devices.configure()
        if "ops" in args.suites:
            suite = suite_module("ops")
            try:
                suite.select_cases(_csv_list(args.ops))
                suite.check_sizes(_csv_list(args.sizes))
            except ValueError as error:  # an unknown op or size name
                bench_parser.error(str(error))
        return bench(args)
    from . import run as launcher
    return launcher.main(args.rest)


if __name__ == "__main__":
    sys.exit(main())
