"""MagicMind's C++ deployment and build API in the Neuware tree: the headers (include/mm_runtime.h, mm_builder.h,
mm_parser.h, mm_calibrator.h over mm_capi.h), libmagicmind_runtime.so / libmagicmind.so (build.py) and the Python
side of their C functions (bindings.py); tree.py adds them to `mlusim neuware DIR`."""
