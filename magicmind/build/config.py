"""magicmind::IBuilderConfig (Python `mm.BuilderConfig`): JSON through parse_from_string / parse_from_file,
deep-merged call after call (nested objects merge key by key), every key and value checked.
"""
from __future__ import annotations

import copy
import json
import numbers
import os

from ..status import MagicMindError, Status

PRECISION_MODES = ("force_float32", "force_float16", "qint8_mixed_float16", "qint8_mixed_float32",
                   "qint16_mixed_float16", "qint16_mixed_float32")
ARCHS = ("mtp_220", "mtp_270", "mtp_290", "mtp_372", "mtp_592", "tp_322", "tp_520")
LAYOUT_PAIRS = {("NCHW", "NHWC"), ("NHWC", "NCHW"), ("NCT", "NTC"), ("NTC", "NCT"), ("NCDHW", "NDHWC"),
                ("NDHWC", "NCDHW")}
DEFAULTS = {
    "precision_config": {"precision_mode": "force_float32", "activation_quant_algo": "symmetric",
                         "weight_quant_granularity": "per_tensor"},
    "archs": ["mtp_372"],
    "graph_shape_mutable": False,
    "dim_range": {},
    "convert_input_layout": {},
    "convert_output_layout": {},
    "insert_bn_before_firstnode": {},
    "opt_config": {"type64to32_conversion": False, "conv_scale_fold": True, "tfu_enable": True},
    "computation_preference": "auto",
    "compute_determinism": False,
    "cross_compile_toolchain_path": "",
    "debug_config": {"fusion_enable": True, "print_ir": {"print_level": 0}},
    "custom_ranges": {},
    "file_path": "",
}


class ConfigError(MagicMindError):
    def __init__(self, path: str, message: str):
        super().__init__(3, f"BuilderConfig: {path}: {message}")


def _bool(value, path):
    if not isinstance(value, bool):
        raise ConfigError(path, f"{value!r} is not true or false")
    return value


def _choice(value, path, choices):
    if value not in choices:
        raise ConfigError(path, f"{value!r} is not one of {', '.join(map(str, choices))}")
    return value


def _object(value, path):
    if not isinstance(value, dict):
        raise ConfigError(path, f"expected an object, got {json.dumps(value)}")
    return value


def _index_key(key, path):
    if not (isinstance(key, str) and key.isdigit()):
        raise ConfigError(path, f"key {key!r} is not an input index (\"0\", \"1\", ...)")
    return key


def _numbers(value, path, integer=False):
    kind = numbers.Integral if integer else numbers.Real
    if not isinstance(value, list) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise ConfigError(path, f"expected a list of {'ints' if integer else 'numbers'}, got {json.dumps(value)}")
    return value


def _check_precision(value, path):
    _object(value, path)
    checks = {"precision_mode": PRECISION_MODES, "activation_quant_algo": ("symmetric", "asymmetric"),
              "weight_quant_granularity": ("per_tensor", "per_axis")}
    for key, item in value.items():
        if key not in checks:
            raise ConfigError(f"{path}.{key}", f"unknown key (known: {', '.join(checks)})")
        _choice(item, f"{path}.{key}", checks[key])


def _check_archs(value, path):
    if not isinstance(value, list) or not value:
        raise ConfigError(path, f"expected a non-empty list, got {json.dumps(value)}")
    for i, item in enumerate(value):
        if isinstance(item, str):
            _choice(item, f"{path}[{i}]", ARCHS)
        elif isinstance(item, dict) and len(item) == 1:
            (arch, clusters), = item.items()
            _choice(arch, f"{path}[{i}]", ARCHS)
            _numbers(clusters, f"{path}[{i}].{arch}", integer=True)
            if not clusters or any(c < 1 for c in clusters):
                raise ConfigError(f"{path}[{i}].{arch}", f"cluster counts {clusters} must be positive")
        else:
            raise ConfigError(f"{path}[{i}]", f"{json.dumps(item)} is neither an arch name nor {{arch: [clusters]}}")


def _check_dim_range(value, path):
    _object(value, path)
    for key, item in value.items():
        _index_key(key, path)
        _object(item, f"{path}.{key}")
        for k in item:
            if k not in ("min", "max"):
                raise ConfigError(f"{path}.{key}.{k}", "unknown key (known: min, max)")
        if "min" not in item or "max" not in item:
            raise ConfigError(f"{path}.{key}", "needs both min and max")
        low = _numbers(item["min"], f"{path}.{key}.min", integer=True)
        high = _numbers(item["max"], f"{path}.{key}.max", integer=True)
        if len(low) != len(high):
            raise ConfigError(f"{path}.{key}", f"min {low} and max {high} differ in rank")
        if any(a < 0 or a > b for a, b in zip(low, high)):
            raise ConfigError(f"{path}.{key}", f"min {low} must be >= 0 and <= max {high} on every axis")


def _check_layouts(value, path):
    _object(value, path)
    for key, item in value.items():
        _index_key(key, path)
        _object(item, f"{path}.{key}")
        for k in item:
            if k not in ("src", "dst"):
                raise ConfigError(f"{path}.{key}.{k}", "unknown key (known: src, dst)")
        pair = (item.get("src"), item.get("dst"))
        if pair not in LAYOUT_PAIRS:
            raise ConfigError(f"{path}.{key}", f"src {pair[0]!r} -> dst {pair[1]!r} is not a supported conversion "
                                               f"(NCHW<->NHWC, NCT<->NTC, NCDHW<->NDHWC)")


def _check_bn(value, path):
    _object(value, path)
    for key, item in value.items():
        _index_key(key, path)
        _object(item, f"{path}.{key}")
        for k in item:
            if k not in ("mean", "var"):
                raise ConfigError(f"{path}.{key}.{k}", "unknown key (known: mean, var)")
        mean = _numbers(item.get("mean"), f"{path}.{key}.mean")
        var = _numbers(item.get("var"), f"{path}.{key}.var")
        if len(mean) != len(var) or not mean:
            raise ConfigError(f"{path}.{key}", f"mean ({len(mean)}) and var ({len(var)}) must have one value per "
                                               "channel")
        if any(v <= 0 for v in var):
            raise ConfigError(f"{path}.{key}.var", f"{var} must be positive")


def _check_opt(value, path):
    _object(value, path)
    for key, item in value.items():
        if key not in DEFAULTS["opt_config"]:
            raise ConfigError(f"{path}.{key}", f"unknown key (known: {', '.join(DEFAULTS['opt_config'])})")
        _bool(item, f"{path}.{key}")


def _check_debug(value, path):
    _object(value, path)
    for key, item in value.items():
        if key == "fusion_enable":
            _bool(item, f"{path}.{key}")
        elif key == "print_ir":
            _object(item, f"{path}.{key}")
            for k, v in item.items():
                if k != "print_level":
                    raise ConfigError(f"{path}.{key}.{k}", "unknown key (known: print_level)")
                if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 3:
                    raise ConfigError(f"{path}.{key}.{k}", f"{v!r} is not a level 0-3")
        else:
            raise ConfigError(f"{path}.{key}", "unknown key (known: fusion_enable, print_ir)")


def _check_ranges(value, path):
    _object(value, path)
    for key, item in value.items():
        _object(item, f"{path}.{key!r}")
        for k in item:
            if k not in ("min", "max"):
                raise ConfigError(f"{path}.{key!r}.{k}", "unknown key (known: min, max)")
        low, high = _numbers(item.get("min"), f"{path}.{key!r}.min"), _numbers(item.get("max"), f"{path}.{key!r}.max")
        if len(low) != len(high) or not low or any(a > b for a, b in zip(low, high)):
            raise ConfigError(f"{path}.{key!r}", f"min {low} and max {high} must be non-empty, of one length, "
                                                 f"min <= max")


def _check_str(value, path):
    if not isinstance(value, str):
        raise ConfigError(path, f"{value!r} is not a string")


CHECKS = {
    "precision_config": _check_precision, "archs": _check_archs, "graph_shape_mutable": _bool,
    "dim_range": _check_dim_range, "convert_input_layout": _check_layouts, "convert_output_layout": _check_layouts,
    "insert_bn_before_firstnode": _check_bn, "opt_config": _check_opt,
    "computation_preference": lambda v, p: _choice(v, p, ("auto", "fast", "high_precision")),
    "compute_determinism": _bool, "cross_compile_toolchain_path": _check_str, "debug_config": _check_debug,
    "custom_ranges": _check_ranges, "file_path": _check_str,
}
#: keys whose objects merge key by key across calls (the others are replaced whole)
MERGED = ("precision_config", "opt_config", "debug_config", "dim_range", "convert_input_layout",
          "convert_output_layout", "insert_bn_before_firstnode", "custom_ranges")


def deep_merge(base: dict, update: dict) -> dict:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class BuilderConfig:
    """mm.BuilderConfig(): the defaults until parse_from_string / parse_from_file merge JSON into it."""

    def __init__(self):
        self._values = copy.deepcopy(DEFAULTS)
        self._given: set = set()

    def parse_from_string(self, text) -> Status:
        """IBuilderConfig::ParseFromString(json): merge; an unknown key or a bad value leaves the config unchanged
        and returns INVALID_ARGUMENT naming it."""
        if not isinstance(text, str):
            return Status(3, f"BuilderConfig: parse_from_string takes a JSON str, not {type(text).__name__}")
        try:
            update = json.loads(text)
        except json.JSONDecodeError as error:
            return Status(3, f"BuilderConfig: not valid JSON ({error})")
        try:
            self._merge(update)
        except MagicMindError as error:
            return error.status
        return Status()

    def parse_from_file(self, path) -> Status:
        """IBuilderConfig::ParseFromFile(path)."""
        if not isinstance(path, (str, os.PathLike)):
            return Status(3, f"BuilderConfig: parse_from_file takes a path, not {type(path).__name__}")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as error:
            return Status(5, f"BuilderConfig: cannot read {os.fspath(path)!r}: {error.strerror}")
        return self.parse_from_string(text)

    def _merge(self, update) -> None:
        if not isinstance(update, dict):
            raise ConfigError("(top level)", "the JSON must be an object")
        for key, value in update.items():
            if key not in CHECKS:
                raise ConfigError(key, f"unknown key (known: {', '.join(CHECKS)})")
            CHECKS[key](value, key)
        merged = deep_merge(self._values, {k: v for k, v in update.items() if k in MERGED})
        for key, value in update.items():
            if key not in MERGED:
                merged[key] = copy.deepcopy(value)
        self._values = merged
        self._given |= set(update)

    def get(self, key: str):
        """The merged value of a top-level key."""
        return copy.deepcopy(self._values[key])

    def given(self, key: str) -> bool:
        return key in self._given

    @property
    def mlu_archs(self) -> list:
        return [a if isinstance(a, str) else next(iter(a)) for a in self._values["archs"]]

    @mlu_archs.setter
    def mlu_archs(self, archs) -> None:
        if isinstance(archs, str):
            archs = [archs]
        _check_archs(list(archs), "mlu_archs")
        self._values["archs"] = list(archs)

    def to_json(self) -> str:
        """The merged configuration as JSON."""
        return json.dumps(self._values, sort_keys=True)

    def as_dict(self) -> dict:
        return copy.deepcopy(self._values)
