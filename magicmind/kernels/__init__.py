"""MagicMind's own host kernels: the fused conv and matmul layers (float and quantized), the elementwise code
generator whose kernels fused chains and layer epilogues run, and numba ufuncs numpy lacks."""
