"""The device's numerics, shared by every part that computes on the host: BANG intrinsics (mlusim.bang), cnnl's
kernels and the numba kernels torch.compile generates for mlu (torch_mlu._inductor).

bitcast     reinterpreting a scalar's bits (float32 <-> uint32/int32, float64 <-> int64) in compiled code
float16     float16 and bfloat16 storage: scalar and array conversions to and from float32, round to nearest even
accumulate  additions and products a compiled reduction loop may reassociate (vector lanes of partial sums)
special     scalar special functions both cnnl and the compile backend evaluate (erfinv)

Everything here is numba; the modules are imported by kernels, not by cnrt (its import does not pay for numba).
"""
