"""PyTorch's own OpInfo tests as the conformance suite of the "mlu" device.

The device-generic test machinery shipped with torch (`torch.testing._internal`: `op_db`, `@ops`,
`instantiate_device_type_tests`) instantiates one forward test and one gradient test per OpInfo for "mlu"
(`suite.py`). Each test runs every OpInfo sample on mlu and again on the CPU and compares the results
(`compare.py`), sample by sample: passed, failed, xfail (a known failure listed with its reason in
`expectations.py`), skipped, and whether the mlu run fell back to the CPU for some aten op.

    mlusim conformance torch [--ops add,mul] [--csv table.csv] [--json table.json]

runs the whole op_db in worker processes (a crash or a hang costs one op, not the run) and prints the per-op
table (`runner.py`, `report.py`); tests/torch_mlu/test_conformance.py runs a fast subset in the test suite.

    mlusim conformance torch_mlu PATH [--folders mlu,torch,storage,torch_ops] [--files TEXT] [--json F]

runs Cambricon's own torch_mlu test suite from a checkout at PATH (`cambricon.py`; the cases that need a real card
are skipped with the reason by `hardware.py`), one pytest process per file, and prints the per-file table.
"""
