"""`mlusim kernels [--out DIR] [--list] SCRIPT [ARGS...]`: run a Python script and print (or write) the numba
source of every kernel torch.compile generated (or loaded from its caches) and ran for mlu tensors."""
from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import Optional, Sequence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mlusim kernels",
        description="Run SCRIPT (as `python SCRIPT ARGS`) and show the numba kernels torch.compile generated for "
                    "its mlu tensors: printed at its end, or written to --out, one file per kernel.")
    parser.add_argument("--out", type=Path, help="write each kernel to DIR/<kernel name>.py instead of printing")
    parser.add_argument("--list", action="store_true", help="print only the kernel names and launch counts")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the script")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    script = Path(args.script)
    if not script.is_file():
        print(f"mlusim kernels: no such script: {script}", file=sys.stderr)
        return 2
    import torch_mlu  # noqa: F401  (registers the mlu device and its compiler)
    from . import debug

    status = 0
    saved_argv = sys.argv
    sys.argv = [str(script)] + list(args.args)
    with debug.recording() as record:
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        finally:
            sys.argv = saved_argv
    kernels = record.kernels
    if args.list:
        for name in kernels:
            print(f"{name}  (launched {record.launch_count.get(name, 0)} times)")
    elif args.out is not None:
        for path in record.write(args.out):
            print(f"written {path}")
    else:
        print(record.source())
    if not kernels:
        print("mlusim kernels: the script compiled no mlu kernels", file=sys.stderr)
    return status
