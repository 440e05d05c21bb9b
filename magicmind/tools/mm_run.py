"""mm_run: run a MagicMind model file and report its latency and throughput, as the release's perf tool does.

    mm_run --magicmind_model resnet50.mm --iterations 1000 --batch_size 16 --devices 0 --threads 1

Flags: --magicmind_model (required), --input_dims (per input; needed for mutable models), --batch_size (replaces
each input's first extent), --input_files (raw binary, one per input; else random data), --output_path (writes
<output_path>output0, output1, ...: the path is a prefix, end it with /), --devices, --threads (per device; each
thread its own context and queue), --warmup ms (200), --duration ms (3000), --iterations (100: runs until both are
reached), --disable_data_copy (inputs stay on the device, outputs are not copied back), --trace_path (a
Chrome/Perfetto trace of the run: every layer's command on its queue, host and modelled MLU timelines),
--debug_path (every layer's output after one run, as .npy), --avg_runs (the latency percentiles over this many
last runs). --bind_cluster, --host_async, --buffer_depth, --infer_depth, --kernel_capture and --trace_pmu tune
the hardware's pipeline and have no effect here.

The summary prints `Throughput (qps): <value> with total batch sizes: <n> and <r> iterations/second` measured on
the host (what this machine ran), then the same from the modelled MLU time of the queued work (mlusim.cost), and
the H2D / compute / D2H latencies (host ms) and the modelled MLU latency.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

import cnrt

from ..python import runtime as mm
from ..python.common.types import get_numpy_dtype_by_datatype
from .common import ToolError, boolean, dims_lists, main_wrapper


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mm_run", description="Run a MagicMind model and report its performance.")
    p.add_argument("--magicmind_model", required=True)
    p.add_argument("--input_dims", nargs="+", action="append")
    p.add_argument("--batch_size", nargs="+", type=int)
    p.add_argument("--input_files", nargs="+")
    p.add_argument("--output_path")
    p.add_argument("--devices", nargs="+", type=int, default=[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=200.0)
    p.add_argument("--duration", type=float, default=3000.0)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--disable_data_copy", type=boolean, default=False)
    p.add_argument("--trace_path")
    p.add_argument("--debug_path")
    p.add_argument("--avg_runs", type=int, default=0)
    p.add_argument("--run_config")
    p.add_argument("--plugin", nargs="+")
    for flag in ("--bind_cluster", "--host_async", "--kernel_capture", "--trace_pmu"):
        p.add_argument(flag, type=boolean, default=False)
    p.add_argument("--buffer_depth", type=int, default=2)
    p.add_argument("--infer_depth", type=int, default=2)
    p.add_argument("--trace_time", choices=("none", "dev", "host", "both"), default="none")
    return p


def _percentiles(values) -> str:
    if not values:
        return "n/a"
    data = np.asarray(values)
    return (f"min : {data.min():.3f} ms, max : {data.max():.3f} ms, mean : {data.mean():.3f} ms, "
            f"median : {np.median(data):.3f} ms, percentile: 90% : {np.percentile(data, 90):.3f} ms, "
            f"95% : {np.percentile(data, 95):.3f} ms, 99% : {np.percentile(data, 99):.3f} ms")


def _shapes(args, model) -> list:
    count = model.get_input_num()
    declared = [d.GetDims() for d in model.get_input_dimensions()]
    given = dims_lists(args.input_dims, "--input_dims")
    if given and len(given) != count:
        raise ToolError(f"--input_dims: {len(given)} shapes for a model of {count} inputs")
    shapes = given or declared
    if args.batch_size:
        if len(args.batch_size) not in (1, count):
            raise ToolError(f"--batch_size: {len(args.batch_size)} values for a model of {count} inputs")
        sizes = args.batch_size * count if len(args.batch_size) == 1 else args.batch_size
        shapes = [[b] + list(s[1:]) if s else s for b, s in zip(sizes, shapes)]
    for i, (shape, name) in enumerate(zip(shapes, model.get_input_names())):
        if any(d < 0 for d in shape):
            raise ToolError(f"input {i} ({name!r}) has mutable dims {shape}: give --input_dims (or --batch_size)")
    return shapes


def _inputs(args, model, shapes) -> list:
    dtypes = [get_numpy_dtype_by_datatype(t) for t in model.get_input_data_types()]
    if args.input_files:
        if len(args.input_files) != len(shapes):
            raise ToolError(f"--input_files: {len(args.input_files)} files for a model of {len(shapes)} inputs")
        arrays = []
        for path, shape, dtype in zip(args.input_files, shapes, dtypes):
            if not os.path.isfile(path):
                raise ToolError(f"--input_files: {path!r} does not exist or is not a file")
            data = np.fromfile(path, dtype)
            if data.size != int(np.prod(shape)):
                raise ToolError(f"--input_files: {path!r} holds {data.size} values of {dtype}; the input's dims "
                                f"{shape} need {int(np.prod(shape))}")
            arrays.append(data.reshape(shape))
        return arrays
    rng = np.random.default_rng(0)
    arrays = []
    for shape, dtype in zip(shapes, dtypes):
        if dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype == np.bool_:
            arrays.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            arrays.append(rng.integers(0, 8, shape).astype(dtype))
    return arrays


class _Worker(threading.Thread):
    """One thread: its own context and queue on one device, runs until the iterations and duration are done."""

    def __init__(self, model, engine, device: int, arrays, args):
        super().__init__(daemon=True)
        self.model, self.engine, self.device, self.arrays, self.args = model, engine, device, arrays, args
        self.h2d, self.compute, self.d2h, self.modelled = [], [], [], []
        self.runs = 0
        self.error = None
        self.outputs = []
        self.start_barrier = None

    def run(self):
        try:
            self._run()
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            self.error = error

    def _run(self):
        cnrt.setDevice(self.device)
        context = self.engine.create_i_context()
        dev = mm.Device(self.device)
        queue = dev.create_queue()
        inputs = context.create_inputs()
        for tensor, array in zip(inputs, self.arrays):
            _check(tensor.from_numpy(array), "from_numpy")
        if self.args.disable_data_copy:
            for tensor in inputs:
                _check(tensor.to(dev), "to(device)")
        if self.args.debug_path:
            os.makedirs(self.args.debug_path, exist_ok=True)
            _check(context.set_context_dump_info(mm.Context.ContextDumpInfo(path=self.args.debug_path,
                                                                            dump_mode=2)), "debug_path")
        start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
        outputs = []
        self.start_barrier.wait()
        began = time.perf_counter()
        warm_until = began + self.args.warmup / 1e3
        measuring_since = None
        while True:
            now = time.perf_counter()
            measuring = now >= warm_until
            if measuring and measuring_since is None:
                measuring_since = now
            t0 = time.perf_counter()
            if not self.args.disable_data_copy:
                for tensor, array in zip(inputs, self.arrays):
                    tensor.from_numpy(array)
            t1 = time.perf_counter()
            cnrt.placeNotifier(start, queue.cnrt_queue)
            _check(context.enqueue(inputs, outputs, queue), "enqueue")
            cnrt.placeNotifier(end, queue.cnrt_queue)
            _check(queue.sync(), "queue sync")
            t2 = time.perf_counter()
            if not self.args.disable_data_copy:
                host = [o.asnumpy() for o in outputs]
            t3 = time.perf_counter()
            if self.args.debug_path:
                context.set_context_dump_info(mm.Context.ContextDumpInfo(dump_mode=0))
            if measuring:
                self.h2d.append((t1 - t0) * 1e3)
                self.compute.append((t2 - t1) * 1e3)
                self.d2h.append((t3 - t2) * 1e3)
                self.modelled.append(cnrt.notifierDuration(start, end) / 1e3)
                self.runs += 1
                elapsed = (time.perf_counter() - measuring_since) * 1e3
                if self.runs >= self.args.iterations and elapsed >= self.args.duration:
                    break
        self.wall = time.perf_counter() - measuring_since
        self.outputs = host if not self.args.disable_data_copy else [o.asnumpy() for o in outputs]
        cnrt.notifierDestroy(start)
        cnrt.notifierDestroy(end)
        context.destroy()
        queue.destroy()


def _check(status, what):
    if not status.ok():
        raise ToolError(f"{what}: {status}")


def run(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.plugin:
        raise ToolError("--plugin: plugin libraries are not supported by this MagicMind")
    if args.run_config:
        raise ToolError("--run_config: not supported by this mm_run; give the shapes with --input_dims")
    if args.threads < 1 or args.iterations < 1 or args.warmup < 0 or args.duration < 0:
        raise ToolError("--threads and --iterations must be >= 1, --warmup and --duration >= 0")
    if not os.path.isfile(args.magicmind_model):
        raise ToolError(f"--magicmind_model: {args.magicmind_model!r} does not exist or is not a file")
    model = mm.Model()
    status = model.deserialize_from_file(args.magicmind_model)
    if not status.ok():
        raise ToolError(f"--magicmind_model: {status}")
    devices = cnrt.getDeviceCount()
    for device in args.devices:
        if not 0 <= device < devices:
            raise ToolError(f"--devices: device {device} does not exist ({devices} devices)")
    shapes = _shapes(args, model)
    arrays = _inputs(args, model, shapes)
    _header(args, model, shapes)
    recorder = None
    if args.trace_path:
        from mlusim import trace
        recorder = trace.Recorder().start()
    engine = model.create_i_engine(mm.Model.EngineConfig())
    workers = [_Worker(model, engine, device, arrays, args) for device in args.devices for _ in range(args.threads)]
    barrier = threading.Barrier(len(workers))
    for worker in workers:
        worker.start_barrier = barrier
        worker.start()
    for worker in workers:
        worker.join()
    if recorder is not None:
        recorder.stop()
        recorder.write(args.trace_path)
    errors = [w.error for w in workers if w.error is not None]
    if errors:
        raise ToolError(f"run failed: {errors[0]}")
    if args.output_path:
        for k, array in enumerate(workers[0].outputs):
            array.tofile(f"{args.output_path}output{k}")
    _summary(args, workers, shapes)
    return 0


def _header(args, model, shapes) -> None:
    print("=================== Parameter Information")
    print(f"magicmind model : {args.magicmind_model}")
    print(f"input dims      : {shapes}")
    print(f"devices         : {args.devices}")
    print(f"threads         : {args.threads}")
    print(f"warmup          : {args.warmup} ms")
    print(f"duration        : {args.duration} ms")
    print(f"iterations      : {args.iterations}")
    print(f"disable data copy : {str(args.disable_data_copy).lower()}")
    print("=================== Model Information")
    print(f"Input num: {model.get_input_num()}")
    for name, dims, dtype in zip(model.get_input_names(), model.get_input_dimensions(), model.get_input_data_types()):
        print(f"{name} : {dims.GetDims()}, {dtype.name}")
    print(f"Output num: {model.get_output_num()}")
    for name, dims, dtype in zip(model.get_output_names(), model.get_output_dimensions(),
                                 model.get_output_data_types()):
        print(f"{name} : {dims.GetDims()}, {dtype.name}")
    print("=================== Device Information")
    for device in args.devices:
        print(f"Device {device} : {cnrt.getDeviceProperties(device).name} (simulated by mlusim)")


def _summary(args, workers, shapes) -> None:
    batch = shapes[0][0] if shapes and shapes[0] else 1
    runs = sum(w.runs for w in workers)
    wall = max(w.wall for w in workers)
    rate = runs / wall if wall > 0 else 0.0
    modelled = [m for w in workers for m in w.modelled]
    window = args.avg_runs if args.avg_runs > 0 else None
    pick = (lambda values: values[-window:]) if window else (lambda values: values)
    per_queue_ms = float(np.mean(modelled)) if modelled else 0.0
    queues = len(workers)
    modelled_rate = queues * 1e3 / per_queue_ms if per_queue_ms > 0 else 0.0
    print("=================== Performance Summary")
    print(f"Throughput (qps): {rate * batch:.3f} with total batch sizes: {batch} and {rate:.3f} iterations/second")
    print(f"Modelled MLU throughput (qps): {modelled_rate * batch:.3f} with total batch sizes: {batch} and "
          f"{modelled_rate:.3f} iterations/second ({queues} queues)")
    print(f"H2D Latency (ms): {_percentiles(pick([v for w in workers for v in w.h2d]))}")
    print(f"Compute Latency (ms): {_percentiles(pick([v for w in workers for v in w.compute]))}")
    print(f"D2H Latency (ms): {_percentiles(pick([v for w in workers for v in w.d2h]))}")
    print(f"Modelled MLU Latency (ms): {_percentiles(pick(modelled))}")
    print(f"Total runs: {runs} in {wall * 1e3:.1f} ms")


def main(argv=None) -> int:
    """mm_run's entry point."""
    return main_wrapper(run, argv if argv is not None else sys.argv[1:], "mm_run")


if __name__ == "__main__":
    sys.exit(main())
