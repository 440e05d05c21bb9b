"""Calibration: `mm.CalibDataInterface` (the data a program gives), `mm.Calibrator` (runs the network in float on
that data and keeps the range of every quantized layer's input), the LINEAR and EQNM algorithms.

    calibrator = mm.Calibrator([calib_data])
    calibrator.set_quantization_algorithm(mm.QuantizationAlgorithm.LINEAR_ALGORITHM)
    calibrator.calibrate(network, config)          # config asks for a qint* precision_mode
    model = mm.Builder().build_model("name", network, config)

`calibrate` builds the network with the same config in float32 (every shape mutable, so each batch may have its
own) and runs it on the current device once per batch: reset(), then next() / get_sample() until next() says
OUT_OF_RANGE. The ranges are stored on the network, keyed by layer; build_model quantizes with them.

LINEAR: the range is [min, max] of the input over all batches. EQNM (Cambricon does not publish it; this is our
reading of the name, "equalised norm": the clipping that equalises rounding and clipping error): a second pass
histograms |x| (2048 bins up to max |x|) and the range is [-t, t] for the threshold t that minimises the expected
squared error of clipping to t plus rounding with step t / qmax. EQNM is symmetric only.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..dims import Dims
from ..dtypes import numpy_of
from ..enums import DataType, QuantizationAlgorithm
from ..status import Code, MagicMindError, Status
from .config import BuilderConfig
from .quantize import range_key

HISTOGRAM_BINS = 2048
#: most batches a calibration reads (a data source that never says OUT_OF_RANGE is an error, not a hang)
MAX_BATCHES = 100000


class CalibDataInterface:
    """mm.CalibDataInterface: subclass it and override get_shape() -> Dims, get_data_type() -> DataType,
    get_sample() -> numpy array (the current batch), next() -> Status (OK while a batch is ready, OUT_OF_RANGE at
    the end), reset() -> Status."""

    def __init__(self):
        pass

    def get_shape(self):
        raise MagicMindError(Code.UNIMPLEMENTED, f"{type(self).__name__}.get_shape is not overridden")

    def get_data_type(self):
        raise MagicMindError(Code.UNIMPLEMENTED, f"{type(self).__name__}.get_data_type is not overridden")

    def get_sample(self):
        raise MagicMindError(Code.UNIMPLEMENTED, f"{type(self).__name__}.get_sample is not overridden")

    def next(self):
        raise MagicMindError(Code.UNIMPLEMENTED, f"{type(self).__name__}.next is not overridden")

    def reset(self):
        raise MagicMindError(Code.UNIMPLEMENTED, f"{type(self).__name__}.reset is not overridden")


class RemoteConfig:
    """mm.RemoteConfig (`address = "ip:port"`): calibration on a remote MLU. The simulator's MLU is local, and a
    remote MLU computes what the local one does, so set_remote's calibration runs on the current device."""

    def __init__(self):
        self.address = ""


class _Range:
    """What LINEAR and EQNM need of one tensor: min, max, then (EQNM) a histogram of |x|."""

    def __init__(self):
        self.low, self.high = np.inf, -np.inf
        self.histogram: Optional[np.ndarray] = None
        self.bound = 0.0

    def update(self, data: np.ndarray) -> None:
        values = np.asarray(data, np.float64)
        finite = values[np.isfinite(values)]
        if finite.size:
            self.low, self.high = min(self.low, float(finite.min())), max(self.high, float(finite.max()))

    def histogram_update(self, data: np.ndarray) -> None:
        magnitude = np.abs(np.asarray(data, np.float64))
        magnitude = magnitude[np.isfinite(magnitude)]
        counts, _ = np.histogram(magnitude, HISTOGRAM_BINS, (0.0, self.bound))
        counts[-1] += int(np.count_nonzero(magnitude > self.bound))
        self.histogram = counts if self.histogram is None else self.histogram + counts

    def eqnm(self, bits: int) -> tuple:
        """[-t, t], t minimising clipping + rounding error over the histogram."""
        if self.histogram is None or self.bound <= 0:
            return -self.bound, self.bound
        qmax = (1 << (bits - 1)) - 1
        width = self.bound / HISTOGRAM_BINS
        centres = (np.arange(HISTOGRAM_BINS) + 0.5) * width
        counts = self.histogram.astype(np.float64)
        best, best_error = self.bound, np.inf
        for stop in range(max(1, HISTOGRAM_BINS // 16), HISTOGRAM_BINS + 1):
            threshold = stop * width
            step = threshold / qmax
            inside = counts[:stop].sum()
            outside = counts[stop:]
            error = inside * step * step / 12.0 + float((outside * (centres[stop:] - threshold) ** 2).sum())
            if error < best_error:
                best, best_error = threshold, error
        return -best, best


def _status(value, what: str) -> Status:
    if not isinstance(value, Status):
        raise MagicMindError(Code.INVALID_ARGUMENT, f"calibration data: {what} returned {type(value).__name__}, "
                                                    f"not a Status")
    return value


class Calibrator:
    """mm.Calibrator([calib_data, ...]): one CalibDataInterface per network input."""

    def __init__(self, data):
        if isinstance(data, CalibDataInterface):
            data = [data]
        if not isinstance(data, (list, tuple)) or not data or \
                not all(isinstance(d, CalibDataInterface) for d in data):
            raise MagicMindError(Code.INVALID_ARGUMENT, "Calibrator: expects a list of CalibDataInterface objects "
                                                        "(one per network input)")
        self.data = list(data)
        self.algorithm = QuantizationAlgorithm.LINEAR_ALGORITHM
        self.remote: Optional[RemoteConfig] = None

    def set_quantization_algorithm(self, algorithm) -> Status:
        """ICalibrator::SetQuantizationAlgorithm(LINEAR_ALGORITHM | EQNM_ALGORITHM)."""
        if not isinstance(algorithm, QuantizationAlgorithm) or algorithm is QuantizationAlgorithm.INVALID:
            return Status(Code.INVALID_ARGUMENT, f"set_quantization_algorithm: {algorithm!r} is not LINEAR_ALGORITHM "
                                                 f"or EQNM_ALGORITHM")
        self.algorithm = algorithm
        return Status()

    def set_remote(self, config) -> Status:
        """Calibrate on a remote MLU (RemoteConfig): here the local one (see RemoteConfig)."""
        if not isinstance(config, RemoteConfig):
            return Status(Code.INVALID_ARGUMENT, "set_remote: expects a RemoteConfig")
        self.remote = config
        return Status()

    def calibrate(self, network, config) -> Status:
        """ICalibrator::Calibrate(network, config): the ranges of the quantized layers' inputs, kept on the
        network for build_model."""
        try:
            self._calibrate(network, config)
        except MagicMindError as error:
            return error.status
        return Status()

    def _calibrate(self, network, config) -> None:
        from ..graph.network import Network
        from . import lower, pipeline
        if not isinstance(network, Network):
            raise MagicMindError(Code.INVALID_ARGUMENT, "calibrate: network must be a Network")
        if not isinstance(config, BuilderConfig):
            raise MagicMindError(Code.INVALID_ARGUMENT, "calibrate: config must be a BuilderConfig")
        precision = config.get("precision_config")
        mode = precision["precision_mode"]
        if not mode.startswith("qint"):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"calibrate: precision_mode is {mode!r}; calibration is "
                                                        f"for the qint8/qint16 modes")
        if self.algorithm is QuantizationAlgorithm.EQNM_ALGORITHM and \
                precision["activation_quant_algo"] == "asymmetric":
            raise MagicMindError(Code.INVALID_ARGUMENT, "calibrate: EQNM_ALGORITHM is symmetric only "
                                                        "(activation_quant_algo asymmetric)")
        if len(self.data) != network.get_input_count():
            raise MagicMindError(Code.INVALID_ARGUMENT, f"calibrate: {len(self.data)} calibration data for a "
                                                        f"network of {network.get_input_count()} inputs")
        bits = 8 if mode.startswith("qint8") else 16
        program = lower.lower(network)
        float_config = BuilderConfig()
        float_config._values = config.as_dict()
        float_config._values["precision_config"] = dict(precision, precision_mode="force_float32")
        float_config._values["graph_shape_mutable"] = True
        float_config._values["dim_range"] = {}
        pipeline.build(program, float_config, network)
        watched = {}
        for step in program.steps:
            positions = [0] if step.op == "conv" else [0, 1] if step.op == "matmul" else []
            for position in positions:
                key = step.ins[position]
                if program.values[key].const is None and program.values[key].dtype.kind == "f":
                    watched.setdefault(key, []).append(range_key(step, position))
        ranges = {key: _Range() for key in watched}
        from ..model.model import Model
        context = Model(program, {"name": "calibration", "build": {}}).create_i_engine().create_i_context()
        from ..runtime.system import Device
        queue = Device(_current_device()).create_queue()
        try:
            context.observers = {key: ranges[key].update for key in watched}
            batches = self._run(context, queue, program)
            if batches == 0:
                raise MagicMindError(Code.INVALID_ARGUMENT, "calibrate: the calibration data gave no batch "
                                                            "(next() said OUT_OF_RANGE at once)")
            if self.algorithm is QuantizationAlgorithm.EQNM_ALGORITHM:
                for stats in ranges.values():
                    stats.bound = max(abs(stats.low), abs(stats.high)) if np.isfinite(stats.low) else 0.0
                context.observers = {key: ranges[key].histogram_update for key in watched}
                self._run(context, queue, program)
        finally:
            context.observers = {}
            context.destroy()
            queue.destroy()
        result = {}
        for key, names in watched.items():
            stats = ranges[key]
            if not np.isfinite(stats.low):
                raise MagicMindError(Code.INVALID_ARGUMENT, f"calibrate: the input of {names[0]} saw no finite value")
            span = stats.eqnm(bits) if self.algorithm is QuantizationAlgorithm.EQNM_ALGORITHM else \
                (stats.low, stats.high)
            for name in names:
                result[name] = (float(span[0]), float(span[1]))
        network._calibration = {"ranges": result, "algorithm": self.algorithm.name, "batches": batches, "bits": bits}

    def _run(self, context, queue, program) -> int:
        """Every batch through the float model; the number of batches."""
        for index, data in enumerate(self.data):
            status = _status(data.reset(), "reset()")
            if not status.ok():
                raise MagicMindError(status.code(), f"calibration data {index}: reset(): {status}")
        inputs = context.create_inputs()
        batches = 0
        while True:
            statuses = [_status(data.next(), "next()") for data in self.data]
            if any(s.code() == Code.OUT_OF_RANGE for s in statuses):
                return batches
            for index, status in enumerate(statuses):
                if not status.ok():
                    raise MagicMindError(status.code(), f"calibration data {index}: next(): {status}")
            for index, (data, tensor) in enumerate(zip(self.data, inputs)):
                sample = self._sample(index, data, program.values[program.inputs[index]].dtype)
                status = tensor.from_numpy(sample)
                if not status.ok():
                    raise MagicMindError(status.code(), f"calibration data {index}: {status}")
            status = context.enqueue(inputs, [], queue)
            if not status.ok():
                raise MagicMindError(status.code(), f"calibrate: batch {batches}: {status}")
            status = queue.sync()
            if not status.ok():
                raise MagicMindError(status.code(), f"calibrate: batch {batches}: {status}")
            batches += 1
            if batches > MAX_BATCHES:
                raise MagicMindError(Code.INVALID_ARGUMENT, f"calibrate: more than {MAX_BATCHES} batches: next() "
                                                            f"never says OUT_OF_RANGE")

    @staticmethod
    def _sample(index: int, data: CalibDataInterface, input_dtype) -> np.ndarray:
        shape = data.get_shape()
        if not isinstance(shape, Dims):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"calibration data {index}: get_shape() returned "
                                                        f"{type(shape).__name__}, not Dims")
        data_type = data.get_data_type()
        if not isinstance(data_type, DataType):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"calibration data {index}: get_data_type() returned "
                                                        f"{data_type!r}, not a DataType")
        sample = np.asarray(data.get_sample())
        dims = tuple(shape.GetDims())
        if sample.size != int(np.prod(dims, dtype=np.int64)) or any(d < 0 for d in dims):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"calibration data {index}: get_sample() holds "
                                                        f"{sample.size} values; get_shape() says {list(dims)}")
        sample = sample.reshape(dims).astype(numpy_of(data_type, "get_data_type()"), copy=False)
        return sample.astype(input_dtype, copy=False)


def _current_device() -> int:
    import cnrt
    return cnrt.getDevice()

