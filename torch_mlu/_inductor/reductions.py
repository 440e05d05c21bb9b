"""The code a reduction adds to a numba kernel (`NumbaKernel.reduction`): an accumulator before the reduction loop,
its update inside the loop, its result after it. Float sums and products accumulate in float64 with reassociable
additions (vector lanes of partial sums), integer ones in int64; max/min propagate NaN; argmax/argmin keep the first
index; Welford's mean/variance (float64 data by Welford's update, narrower data by float64 sums); online softmax.
"""
from __future__ import annotations

import torch

from . import dtypes as D
from .unsupported import Unsupported


def reduction_code(kernel, dtype, src_dtype, reduction_type, value):
    """The reduction of `value` (a CSE variable of the loop body) as `reduction_type`, into `dtype`: its
    accumulator goes before the reduction loop, its update into the loop, its result after it (one CSE variable,
    or a tuple of them for Welford and online softmax)."""
    compute = D.compute_dtype(src_dtype)
    scalar = D.numba_scalar(compute)
    is_float = compute.is_floating_point
    out = D.numba_scalar(D.compute_dtype(dtype))
    if reduction_type in ("sum", "prod"):
        if is_float:
            acc = kernel.accumulator("np.float64(0.0)" if reduction_type == "sum" else "np.float64(1.0)")
            combine = "h.acc_add" if reduction_type == "sum" else "h.acc_mul"
            kernel.compute.writeline(f"{acc} = {combine}({acc}, np.float64({value}))")
        else:
            acc = kernel.accumulator("np.int64(0)" if reduction_type == "sum" else "np.int64(1)")
            op = "+" if reduction_type == "sum" else "*"
            kernel.compute.writeline(f"{acc} = {acc} {op} np.int64({value})")
        return kernel.reduction_result(f"{out}({acc})" if dtype != torch.bool else f"({acc} != 0)", dtype)
    if reduction_type in ("max", "min"):
        if compute == torch.bool:
            acc = kernel.accumulator("False" if reduction_type == "max" else "True")
            op = "or" if reduction_type == "max" else "and"
            kernel.compute.writeline(f"{acc} = {acc} {op} ({value} != 0)")
        elif is_float:
            init = "-np.inf" if reduction_type == "max" else "np.inf"
            acc = kernel.accumulator(f"{scalar}({init})")
            fn = "h.maximum" if reduction_type == "max" else "h.minimum"
            kernel.compute.writeline(f"{acc} = {fn}({acc}, {scalar}({value}))")
        else:
            info = torch.iinfo(compute)
            init = info.min if reduction_type == "max" else info.max
            acc = kernel.accumulator(f"{scalar}({init})")
            fn = "h.int_maximum" if reduction_type == "max" else "h.int_minimum"
            kernel.compute.writeline(f"{acc} = {fn}({acc}, {scalar}({value}))")
        return kernel.reduction_result(f"{out}({acc})", dtype)
    if reduction_type == "any":
        acc = kernel.accumulator("False")
        kernel.compute.writeline(f"{acc} = {acc} or ({value} != 0)")
        return kernel.reduction_result(f"{out}({acc})", dtype)
    if reduction_type == "xor_sum":
        acc = kernel.accumulator(f"{scalar}(0)")
        kernel.compute.writeline(f"{acc} = {scalar}({acc} ^ {scalar}({value}))")
        return kernel.reduction_result(f"{out}({acc})", dtype)
    if reduction_type in ("argmax", "argmin"):
        if isinstance(value, tuple):
            raise Unsupported("argreduce over a logical index")
        if compute == torch.bool:
            scalar = "np.int64"
        best = kernel.accumulator(f"{scalar}(0)")
        where = kernel.accumulator("np.int64(-1)")
        fn = "h.argmax_update" if reduction_type == "argmax" else "h.argmin_update"
        kernel.compute.writeline(f"{best}, {where} = {fn}({best}, {where}, {scalar}({value}), "
                               f"{kernel.reduction_index()})")
        return kernel.reduction_result(f"np.int64(max({where}, 0))", torch.int64)
    if reduction_type == "welford_reduce":
        return _welford_reduce(kernel, value, compute, dtype)
    if reduction_type == "welford_combine":
        mean, m2, weight = value
        acc_mean = kernel.accumulator("np.float64(0.0)")
        acc_m2 = kernel.accumulator("np.float64(0.0)")
        acc_weight = kernel.accumulator("np.float64(0.0)")
        kernel.compute.writeline(f"{acc_mean}, {acc_m2}, {acc_weight} = h.welford_combine({acc_mean}, {acc_m2}, "
                               f"{acc_weight}, {mean}, {m2}, {weight})")
        return (kernel.reduction_result(f"{out}({acc_mean})", dtype), kernel.reduction_result(f"{out}({acc_m2})", dtype),
                kernel.reduction_result(f"{out}({acc_weight})", dtype))
    if reduction_type == "online_softmax_reduce":
        acc_max = kernel.accumulator(f"{scalar}(-np.inf)")
        acc_sum = kernel.accumulator("np.float64(0.0)")
        kernel.compute.writeline(f"{acc_max}, {acc_sum} = h.online_softmax_update({acc_max}, {acc_sum}, "
                               f"{scalar}({value}))")
        return kernel.reduction_result(f"{out}({acc_max})", dtype), kernel.reduction_result(f"{out}({acc_sum})", dtype)
    raise Unsupported(f"reduction {reduction_type}")

def _welford_reduce(kernel, value, compute: torch.dtype, dtype: torch.dtype):
    out = D.numba_scalar(D.compute_dtype(dtype))
    count = kernel.accumulator("np.float64(0.0)")
    if compute == torch.float64:
        # float64 data: Welford's update keeps full precision whatever the mean
        mean = kernel.accumulator("np.float64(0.0)")
        m2 = kernel.accumulator("np.float64(0.0)")
        kernel.compute.writeline(f"{mean}, {m2}, {count} = h.welford_update({mean}, {m2}, {count}, {value})")
        return (kernel.reduction_result(f"{out}({mean})", dtype), kernel.reduction_result(f"{out}({m2})", dtype),
                kernel.reduction_result(f"{out}({count})", dtype))
    # narrower data: sums in float64 are exact enough (53 bits for 24-bit values) and vectorise
    total = kernel.accumulator("np.float64(0.0)")
    squares = kernel.accumulator("np.float64(0.0)")
    kernel.compute.writeline(f"{total} = h.acc_add({total}, np.float64({value}))")
    kernel.compute.writeline(f"{squares} = h.acc_add({squares}, np.float64({value}) * np.float64({value}))")
    kernel.compute.writeline(f"{count} = h.acc_add({count}, np.float64(1.0))")
    mean = kernel.reduction_result(f"{out}(({total} / {count}) if {count} > 0 else np.nan)", dtype)
    m2 = kernel.reduction_result(f"{out}(max({squares} - {total} * ({total} / {count}), 0.0) if {count} > 0 else 0.0)",
                      dtype)
    weight = kernel.reduction_result(f"{out}({count})", dtype)
    return mean, m2, weight
