"""Host kernels of the engine that cnnl's kernel library does not already provide: numba ufuncs, the elementwise
code generator, detection decoding."""
