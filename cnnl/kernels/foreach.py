"""Multi-tensor ("foreach") form of any elementwise kernel: one queued command walks whole lists of tensors, each
tensor in one pass of the same kernel its single-tensor op runs, so results are those of the op applied to each
tensor in turn (what torch's `_foreach_*` ops mean). The lists' Python loop is per tensor, never per element.
"""


def for_each(kernel, *lists):
    """kernel(lists[0][i], lists[1][i], ...) for every i in order (the lists are equally long); the kernel's last
    argument is usually the output."""
    for arguments in zip(*lists, strict=True):
        kernel(*arguments)
