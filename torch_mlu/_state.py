"""The process's torch_mlu state, set once by torch_mlu/__init__: the C++ module and the Python runtime."""
C = None        # the C++ extension module (torch_mlu._extension.load())
runtime = None  # torch_mlu._runtime.Runtime
