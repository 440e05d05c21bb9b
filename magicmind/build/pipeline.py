"""The builder's passes in order, driven by the BuilderConfig."""
from __future__ import annotations

from ..graph.program import Program
from ..status import MagicMindError
from . import folding, fusion, layout, normalize, passes, precision, quantize
from .config import BuilderConfig


def apply_shapes(program: Program, config: BuilderConfig) -> None:
    """Fixed models keep the network's input dims (all known); mutable ones (graph_shape_mutable) take -1 on every
    axis whose dim_range min and max differ (every axis without a dim_range), and keep the range for run time."""
    mutable = config.get("graph_shape_mutable")
    ranges = config.get("dim_range")
    for key in ranges:
        if int(key) >= len(program.inputs):
            raise MagicMindError(3, f"BuilderConfig: dim_range.{key}: the network has {len(program.inputs)} inputs")
    for i, key in enumerate(program.inputs):
        value = program.values[key]
        bounds = ranges.get(str(i))
        if value.shape is None:
            if bounds is None:
                raise MagicMindError(3, f"input {i} ({value.name!r}) has no dims: set them (set_dimension) or give "
                                        f"its dim_range")
            value.shape = tuple(-1 for _ in bounds["min"])
        if bounds is not None:
            if len(bounds["min"]) != len(value.shape):
                raise MagicMindError(3, f"BuilderConfig: dim_range.{i} has rank {len(bounds['min'])}; input {i} "
                                        f"({value.name!r}) has rank {len(value.shape)}")
            for axis, (low, high, d) in enumerate(zip(bounds["min"], bounds["max"], value.shape)):
                if d >= 0 and not low <= d <= high and not mutable:
                    raise MagicMindError(3, f"BuilderConfig: dim_range.{i} axis {axis} [{low}, {high}] excludes the "
                                            f"input's extent {d}")
            value.shape = tuple(lo if lo == hi else -1 for lo, hi in zip(bounds["min"], bounds["max"]))
            program.ranges[i] = (list(bounds["min"]), list(bounds["max"]))
        elif mutable:
            value.shape = tuple(-1 for _ in value.shape)
        elif -1 in value.shape:
            raise MagicMindError(3, f"input {i} ({value.name!r}) has dims {list(value.shape)} with -1: set "
                                    f"graph_shape_mutable and a dim_range, or fix the dims")


def build(program: Program, config: BuilderConfig, network) -> dict:
    """Rewrite `program` as the config asks; returns what was done (the model's build info)."""
    info = {"precision": config.get("precision_config")["precision_mode"], "steps_lowered": len(program.steps)}
    apply_shapes(program, config)
    info["folded"] = passes.fold_constants(program)
    info["dead_steps_removed"] = passes.remove_dead_steps(program)
    info["inputs_normalized"] = normalize.insert_bn(program, config.get("insert_bn_before_firstnode"))
    info.update(folding.fold_into_conv(program, config.get("opt_config")["conv_scale_fold"]))
    layout.convert_io(program, config.get("convert_input_layout"))
    info.update(layout.to_nhwc(program, config.get("convert_output_layout")))
    info["matmul_weights_packed"] = layout.pack_matmul_weights(program)
    info["dead_steps_removed"] += passes.remove_dead_steps(program)
    info.update(precision.apply(program, info["precision"]))
    if info["precision"].startswith("qint"):
        settings = config.get("precision_config")
        calibration = getattr(network, "_calibration", None) or {}
        ranges = quantize.Ranges(calibration.get("ranges"), config.get("custom_ranges"))
        info.update(quantize.quantize(program, 8 if info["precision"].startswith("qint8") else 16, ranges,
                                      settings["activation_quant_algo"] == "asymmetric",
                                      settings["weight_quant_granularity"] == "per_axis"))
        info["calibration"] = {k: v for k, v in calibration.items() if k != "ranges"}
    if config.get("debug_config")["fusion_enable"]:
        info.update(fusion.fuse(program))
    info["dead_steps_removed"] += passes.remove_dead_steps(program)
    passes.reinfer(program)
    info["layers"] = len(program.steps)
    info["memory"] = memory_info(program)
    return info


def memory_info(program: Program) -> dict:
    """The device memory the model needs per context: for fixed input shapes (else at the dim_range maxima) the
    arena of the memory plan (intermediates sharing buffers) against one buffer per intermediate; constants."""
    from ..runtime import plan as P
    constants = sum(P.aligned(v.const.nbytes) for v in program.values.values() if v.const is not None)
    shapes = []
    for i, key in enumerate(program.inputs):
        shape = program.values[key].shape
        if shape is not None and -1 in shape and program.ranges[i] is not None:
            shape = tuple(program.ranges[i][1])
        if shape is None or -1 in shape:
            return {"constants": constants}
        shapes.append(tuple(shape))
    try:
        shape_plan = P.plan_shapes(program, shapes)
        if shape_plan.dynamic:
            return {"constants": constants}
        memory = P.plan_memory(program, shape_plan)
    except MagicMindError:
        return {"constants": constants}
    return {"constants": constants, "intermediate_peak": memory.arena_bytes,
            "intermediate_total": memory.separate_bytes, "input_shapes": [list(s) for s in shapes]}
