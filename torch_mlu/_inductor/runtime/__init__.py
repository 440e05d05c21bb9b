"""What the code of compiled mlu graphs imports at run time: kernel launchers (launcher.py), the numba helpers the
kernels call (helpers.py), the on-disk kernel modules (source_cache.py) and stream lookups (streams.py)."""
