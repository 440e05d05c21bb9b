"""Multi-tensor ("foreach") forms of the elementwise kernels: one queued command walks a whole list of tensors,
each tensor in one pass of the same kernel its single-tensor op runs, so results are those of the op applied to
each tensor in turn (what torch's `_foreach_*` ops mean). The lists' Python loop is per tensor, never per element.
"""
from .binary import op_tensor


def foreach_op_tensor(op, a_list, b_list, out_list, alpha1=1.0, alpha2=1.0):
    """out_list[i] = op(alpha1 * a_list[i], alpha2 * b_list[i]) for every i (`cnnlOpTensor` on each triple; b may
    be a one-element array broadcast to every tensor)."""
    for a, b, out in zip(a_list, b_list, out_list, strict=True):
        op_tensor(op, a, b, out, alpha1, alpha2, 0.0)
