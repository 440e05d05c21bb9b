"""mm_build (and onnx_build, pytorch_build, caffe_build, tensorflow_build): a framework model -> a MagicMind
model file, as the release's builders do, through the public Python API only.

    onnx_build --onnx resnet50.onnx --input_dims 1,3,224,224 --precision qint8_mixed_float16 \\
               --calibration true --calibration_algo linear --file_list list.txt --calibration_data_path data/ \\
               --magicmind_model resnet50.mm

Flags (defaults as the release's): --precision (force_float32), --input_dims, --batch_size (replaces each
input's first extent), --dynamic_shape (true: every axis mutable unless --dim_range_min/max give it),
--dim_range_min / --dim_range_max, --input_layout / --output_layout (NHWC, NTC, NDHWC: the model's I/O layout),
--input_dtypes / --output_dtypes, --means / --vars (insert_bn_before_firstnode; the input becomes UINT8),
--calibration, --calibration_algo linear|eqnm, --file_list + --calibration_data_path (one line per batch, one
`file[:d0,d1,...]` per input: raw data of the input's type; the dims per file allow variable shapes),
--random_calib_range min max (random calibration data), --rpc_server, --mlu_arch, --cluster_num,
--computation_preference, --type64to32_conversion, --conv_scale_fold, --toolchain_path, --build_config (a JSON
file, applied last: it overrides the flags), --magicmind_model (./model). `--calibration true` without data
calibrates with custom_ranges [-1, 1] for every tensor (the model builds; its accuracy is not meant).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from ..python import runtime as mm
from ..python.common.types import get_datatype_by_numpy, get_numpy_dtype_by_datatype
from ..python.runtime.parser import Parser
from .common import ToolError, boolean, dims_lists, dtype_list, float_lists, main_wrapper

FRAMEWORKS = {"onnx": "--onnx", "pytorch": "--pytorch_pt", "caffe": "--caffemodel", "tensorflow": "--tf_pb"}
LAYOUTS = {"NHWC": "NCHW", "NTC": "NCT", "NDHWC": "NCDHW"}
RANDOM_CALIBRATION_BATCHES = 2


def parser(prog: str, framework: str = None) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="Build a MagicMind model from a framework model.")
    if framework in (None, "onnx"):
        p.add_argument("--onnx", help="ONNX model file")
    if framework in (None, "pytorch"):
        p.add_argument("--pytorch_pt", help="TorchScript model file (torch.jit.save)")
        p.add_argument("--pt_input_dtypes", nargs="+", default=None, help="per input: FLOAT, HALF, INT32, ...")
    if framework in (None, "caffe"):
        p.add_argument("--prototxt")
        p.add_argument("--caffemodel")
    if framework in (None, "tensorflow"):
        p.add_argument("--tf_pb")
        p.add_argument("--input_names", nargs="+")
        p.add_argument("--output_names", nargs="+")
    p.add_argument("--magicmind_model", default="./model")
    p.add_argument("--precision", default="force_float32")
    p.add_argument("--input_dims", nargs="+", action="append")
    p.add_argument("--batch_size", nargs="+", type=int)
    p.add_argument("--dynamic_shape", type=boolean, default=True)
    p.add_argument("--dim_range_min", nargs="+", action="append")
    p.add_argument("--dim_range_max", nargs="+", action="append")
    p.add_argument("--input_layout", nargs="+")
    p.add_argument("--output_layout", nargs="+")
    p.add_argument("--input_dtypes", nargs="+")
    p.add_argument("--output_dtypes", nargs="+")
    p.add_argument("--means", nargs="+", action="append")
    p.add_argument("--vars", nargs="+", action="append")
    p.add_argument("--calibration", type=boolean, default=False)
    p.add_argument("--calibration_algo", choices=("linear", "eqnm"), default="linear")
    p.add_argument("--file_list")
    p.add_argument("--calibration_data_path", default="")
    p.add_argument("--random_calib_range", nargs=2, type=float)
    p.add_argument("--rpc_server", default="")
    p.add_argument("--mlu_arch", nargs="+")
    p.add_argument("--cluster_num", nargs="+", type=int)
    p.add_argument("--computation_preference", choices=("auto", "fast", "high_precision"))
    p.add_argument("--type64to32_conversion", type=boolean)
    p.add_argument("--conv_scale_fold", type=boolean)
    p.add_argument("--toolchain_path")
    p.add_argument("--build_config")
    p.add_argument("--rgb2bgr", type=boolean, default=False)
    p.add_argument("--plugin", nargs="+")
    return p


class _Files(mm.CalibDataInterface):
    """Calibration batches of one input read from the file list."""

    def __init__(self, batches):
        super().__init__()
        self.batches, self.index = batches, -1

    def get_shape(self):
        return mm.Dims(list(self.batches[self.index if self.index >= 0 else 0].shape))

    def get_data_type(self):
        return get_datatype_by_numpy(self.batches[0].dtype)

    def get_sample(self):
        return self.batches[self.index]

    def next(self):
        self.index += 1
        return mm.Status() if self.index < len(self.batches) else mm.Status(mm.Code.OUT_OF_RANGE, "end of data")

    def reset(self):
        self.index = -1
        return mm.Status()


def _parse_network(args, framework: str):
    net = mm.Network()
    if framework == "onnx":
        if not args.onnx:
            raise ToolError("--onnx: the ONNX model to build is missing")
        status = Parser(mm.ModelKind.kOnnx).parse(net, _existing(args.onnx, "--onnx"))
    elif framework == "pytorch":
        if not args.pytorch_pt:
            raise ToolError("--pytorch_pt: the TorchScript model to build is missing")
        parse = Parser(mm.ModelKind.kPytorch)
        if args.pt_input_dtypes:
            status = parse.set_model_param("pytorch-input-dtypes", dtype_list(args.pt_input_dtypes, "--pt_input_dtypes"))
            if not status.ok():
                raise ToolError(f"--pt_input_dtypes: {status}")
        status = parse.parse(net, _existing(args.pytorch_pt, "--pytorch_pt"))
    elif framework == "caffe":
        if not args.caffemodel or not args.prototxt:
            raise ToolError("--prototxt and --caffemodel: the Caffe model to build is missing")
        status = Parser(mm.ModelKind.kCaffe).parse(net, _existing(args.caffemodel, "--caffemodel"),
                                                   _existing(args.prototxt, "--prototxt"))
    else:
        if not args.tf_pb:
            raise ToolError("--tf_pb: the TensorFlow model to build is missing")
        status = Parser(mm.ModelKind.kTensorflow).parse(net, _existing(args.tf_pb, "--tf_pb"))
    if not status.ok():
        raise ToolError(f"parsing the model: {status}")
    return net


def _existing(path: str, flag: str) -> str:
    if not os.path.isfile(path):
        raise ToolError(f"{flag}: {path!r} does not exist or is not a file")
    return path


def _per_input(values, count: int, flag: str) -> list:
    if values and len(values) not in (1, count):
        raise ToolError(f"{flag}: {len(values)} values for a model of {count} inputs")
    if values and len(values) == 1 and count > 1:
        return values * count
    return values or []


def _configure(args, net) -> "mm.BuilderConfig":
    count = net.get_input_count()
    config = mm.BuilderConfig()
    settings = {"precision_config": {"precision_mode": args.precision}}
    dims = dims_lists(args.input_dims, "--input_dims")
    if dims and len(dims) != count:
        raise ToolError(f"--input_dims: {len(dims)} shapes for a model of {count} inputs")
    batches = _per_input(args.batch_size, count, "--batch_size")
    for i in range(count):
        tensor = net.get_input(i)
        shape = dims[i] if dims else tensor.get_dimension().GetDims()
        if batches and shape:
            shape = [batches[i]] + list(shape[1:])
        if dims or batches:
            status = tensor.set_dimension(mm.Dims(shape))
            if not status.ok():
                raise ToolError(f"--input_dims: input {i}: {status}")
    low = dims_lists(args.dim_range_min, "--dim_range_min")
    high = dims_lists(args.dim_range_max, "--dim_range_max")
    if len(low) != len(high):
        raise ToolError("--dim_range_min and --dim_range_max must be given for the same inputs")
    settings["graph_shape_mutable"] = bool(args.dynamic_shape)
    if low:
        settings["dim_range"] = {str(i): {"min": a, "max": b} for i, (a, b) in enumerate(zip(low, high))}
    for flag, values, key in (("--input_layout", args.input_layout, "convert_input_layout"),
                              ("--output_layout", args.output_layout, "convert_output_layout")):
        conversions = {}
        for i, layout in enumerate(values or []):
            layout = layout.upper()
            if layout in LAYOUTS:
                conversions[str(i)] = {"src": LAYOUTS[layout], "dst": layout}
            elif layout not in LAYOUTS.values():
                raise ToolError(f"{flag}: {layout!r} is not a layout (NCHW, NHWC, NCT, NTC, NCDHW, NDHWC)")
        if conversions:
            settings[key] = conversions
    means, variances = float_lists(args.means, "--means"), float_lists(args.vars, "--vars")
    if len(means) != len(variances):
        raise ToolError("--means and --vars must be given for the same inputs")
    if means:
        settings["insert_bn_before_firstnode"] = {str(i): {"mean": m, "var": v}
                                                  for i, (m, v) in enumerate(zip(means, variances))}
    if args.mlu_arch:
        settings["archs"] = [({arch: args.cluster_num} if args.cluster_num else arch) for arch in args.mlu_arch]
    if args.computation_preference:
        settings["computation_preference"] = args.computation_preference
    opt = {}
    if args.type64to32_conversion is not None:
        opt["type64to32_conversion"] = args.type64to32_conversion
    if args.conv_scale_fold is not None:
        opt["conv_scale_fold"] = args.conv_scale_fold
    if opt:
        settings["opt_config"] = opt
    if args.toolchain_path:
        settings["cross_compile_toolchain_path"] = args.toolchain_path
    status = config.parse_from_string(json.dumps(settings))
    if not status.ok():
        raise ToolError(str(status))
    for i, name in enumerate(args.input_dtypes or []):
        (dtype,) = dtype_list([name], "--input_dtypes")
        if i >= count:
            raise ToolError(f"--input_dtypes: {len(args.input_dtypes)} types for a model of {count} inputs")
        status = net.get_input(i).set_data_type(dtype)
        if not status.ok():
            raise ToolError(f"--input_dtypes: input {i}: {status}")
    if args.output_dtypes:
        _output_dtypes(net, dtype_list(args.output_dtypes, "--output_dtypes"))
    if args.build_config:
        status = config.parse_from_file(_existing(args.build_config, "--build_config"))
        if not status.ok():
            raise ToolError(f"--build_config: {status}")
    return config


def _output_dtypes(net, dtypes) -> None:
    outputs = [net.get_output(i) for i in range(net.get_output_count())]
    if len(dtypes) not in (1, len(outputs)):
        raise ToolError(f"--output_dtypes: {len(dtypes)} types for a model of {len(outputs)} outputs")
    dtypes = dtypes * len(outputs) if len(dtypes) == 1 else dtypes
    for tensor in outputs:
        net.unmark_output(tensor)
    for tensor, dtype in zip(outputs, dtypes):
        if tensor.get_data_type() == dtype:
            net.mark_output(tensor)
            continue
        name = tensor.get_tensor_name()
        cast = net.add_i_cast_node(tensor, dtype).get_output(0)
        tensor.set_tensor_name(name + "/before_cast")
        cast.set_tensor_name(name)
        net.mark_output(cast)


def _calibrate(args, net, config) -> str:
    """Calibrate when asked; what was used."""
    if not args.calibration:
        return "none"
    count = net.get_input_count()
    if args.file_list:
        data = _read_file_list(args.file_list, args.calibration_data_path, net)
        used = f"{len(data[0].batches)} batches from {args.file_list}"
    elif args.random_calib_range:
        low, high = args.random_calib_range
        rng = np.random.default_rng(0)
        data = []
        for i in range(count):
            shape = [d if d >= 0 else 1 for d in net.get_input(i).get_dimension().GetDims()]
            dtype = get_numpy_dtype_by_datatype(net.get_input(i).get_data_type())
            data.append(_Files([rng.uniform(low, high, shape).astype(dtype)
                                for _ in range(RANDOM_CALIBRATION_BATCHES)]))
        used = f"random data in [{low}, {high}]"
    else:
        status = config.parse_from_string('{"custom_ranges": {"": {"min": [-1], "max": [1]}}}')
        if not status.ok():
            raise ToolError(str(status))
        return "custom_ranges [-1, 1] (no calibration data)"
    calibrator = mm.Calibrator(data)
    algorithm = mm.QuantizationAlgorithm.EQNM_ALGORITHM if args.calibration_algo == "eqnm" else \
        mm.QuantizationAlgorithm.LINEAR_ALGORITHM
    calibrator.set_quantization_algorithm(algorithm)
    if args.rpc_server:
        remote = mm.RemoteConfig()
        remote.address = args.rpc_server
        calibrator.set_remote(remote)
    status = calibrator.calibrate(net, config)
    if not status.ok():
        raise ToolError(f"calibration: {status}")
    return used + f" ({args.calibration_algo})"


def _read_file_list(path: str, folder: str, net) -> list:
    count = net.get_input_count()
    batches = [[] for _ in range(count)]
    with open(_existing(path, "--file_list"), encoding="utf-8") as handle:
        lines = [line.split() for line in handle if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ToolError(f"--file_list: {path!r} lists no file")
    for number, entries in enumerate(lines, 1):
        if len(entries) != count:
            raise ToolError(f"--file_list: line {number} has {len(entries)} files for a model of {count} inputs")
        for i, entry in enumerate(entries):
            name, _, dims_text = entry.partition(":")
            tensor = net.get_input(i)
            dims = [int(d) for d in dims_text.split(",")] if dims_text else tensor.get_dimension().GetDims()
            if any(d < 0 for d in dims):
                raise ToolError(f"--file_list: line {number}: {name!r}: give its dims (file:d0,d1,...): input {i} "
                                f"is {dims}")
            dtype = get_numpy_dtype_by_datatype(tensor.get_data_type())
            file_path = os.path.join(folder, name)
            try:
                data = np.fromfile(file_path, dtype)
            except OSError as error:
                raise ToolError(f"--file_list: line {number}: cannot read {file_path!r}: {error.strerror}") from None
            if data.size != int(np.prod(dims)):
                raise ToolError(f"--file_list: line {number}: {file_path!r} holds {data.size} values of {dtype}, "
                                f"dims {dims} need {int(np.prod(dims))}")
            batches[i].append(data.reshape(dims))
    return [_Files(b) for b in batches]


def build(argv=None, prog="mm_build", framework=None) -> int:
    args = parser(prog, framework).parse_args(argv)
    if args.plugin:
        raise ToolError("--plugin: plugin libraries are not supported by this MagicMind")
    if args.rgb2bgr:
        raise ToolError("--rgb2bgr: not supported by this MagicMind (convert the channels before the model)")
    if framework is None:
        given = [name for name, flag in FRAMEWORKS.items() if getattr(args, flag.lstrip("-"), None)]
        if len(given) != 1:
            raise ToolError("give exactly one model: --onnx, --pytorch_pt, --prototxt/--caffemodel or --tf_pb")
        framework = given[0]
    started = time.perf_counter()
    net = _parse_network(args, framework)
    config = _configure(args, net)
    calibration = _calibrate(args, net, config) if args.precision.startswith("qint") else "none"
    builder = mm.Builder()
    model = builder.build_model(os.path.basename(args.magicmind_model) or "model", net, config)
    if model is None:
        raise ToolError(f"build failed: {builder.last_status}")
    status = model.serialize_to_file(args.magicmind_model)
    if not status.ok():
        raise ToolError(f"--magicmind_model: {status}")
    info = model.get_build_info()
    print(f"[MM_BUILD] precision: {args.precision}, calibration: {calibration}")
    for i, (name, dims, dtype) in enumerate(zip(model.get_input_names(), model.get_input_dimensions(),
                                                model.get_input_data_types())):
        print(f"[MM_BUILD] input {i}: {name} : {dims.GetDims()}, {dtype.name}")
    for i, (name, dims, dtype) in enumerate(zip(model.get_output_names(), model.get_output_dimensions(),
                                                model.get_output_data_types())):
        print(f"[MM_BUILD] output {i}: {name} : {dims.GetDims()}, {dtype.name}")
    print(f"[MM_BUILD] layers: {info.get('layers')}, built in {time.perf_counter() - started:.2f} s")
    print(f"[MM_BUILD] Generate model done, model save to {args.magicmind_model}")
    return 0


def main(argv=None) -> int:
    """mm_build: the framework chosen by the model flag given."""
    return main_wrapper(lambda a: build(a, "mm_build"), argv if argv is not None else sys.argv[1:], "mm_build")


def onnx_main(argv=None) -> int:
    return main_wrapper(lambda a: build(a, "onnx_build", "onnx"), argv if argv is not None else sys.argv[1:],
                        "onnx_build")


def pytorch_main(argv=None) -> int:
    return main_wrapper(lambda a: build(a, "pytorch_build", "pytorch"), argv if argv is not None else sys.argv[1:],
                        "pytorch_build")


def caffe_main(argv=None) -> int:
    return main_wrapper(lambda a: build(a, "caffe_build", "caffe"), argv if argv is not None else sys.argv[1:],
                        "caffe_build")


def tensorflow_main(argv=None) -> int:
    return main_wrapper(lambda a: build(a, "tensorflow_build", "tensorflow"),
                        argv if argv is not None else sys.argv[1:], "tensorflow_build")


if __name__ == "__main__":
    sys.exit(main())
