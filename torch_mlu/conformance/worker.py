"""A conformance worker process: `python -m torch_mlu.conformance.worker [op names...]`.

It instantiates the mlu tests (suite.py) for the ops named (all of op_db without names), prints `ready`, then
reads one OpInfo full name per line on stdin, runs that op's forward and gradient tests and answers with one JSON
line on its protocol channel (the original stdout; whatever the ops print goes to stderr). An empty line or EOF
ends it. The runner (runner.py) restarts a worker that crashed or hung on an op.
"""
from __future__ import annotations

import json
import os
import sys
import unittest


def _protocol_channel():
    """The original stdout for answers; sys.stdout (and fd 1) now go to stderr."""
    channel = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


def _tests_by_op(test_class) -> dict[str, list[str]]:
    """op full name -> names of its test methods."""
    from .suite import select
    found: dict[str, list[str]] = {}
    by_formatted = {op.formatted_name: op.full_name for op in select(None)}
    for name in dir(test_class):
        for prefix in ("test_forward_", "test_gradient_"):
            if name.startswith(prefix) and callable(getattr(test_class, name)):
                rest = name[len(prefix):]
                formatted = rest[:rest.rindex("_mlu_")]
                found.setdefault(by_formatted[formatted], []).append(name)
    return found


def _outcome(result: unittest.TestResult, test) -> str:
    for kind, entries in (("error", result.errors), ("failed", result.failures)):
        if any(case is test for case, _ in entries):
            return kind
    if any(case is test for case, _ in result.skipped):
        return "skipped"
    if any(case is test for case, _ in result.expectedFailures):
        return "xfail"
    return "passed"


def main(argv=None) -> int:
    channel = _protocol_channel()
    os.environ.setdefault("MLUSIM_TORCH_FALLBACK", "silent")
    import torch_mlu
    torch_mlu.fallback.set_mode("silent")
    import warnings
    warnings.simplefilter("ignore")
    from . import suite
    names = list(argv if argv is not None else sys.argv[1:]) or None
    test_class = suite.instantiate({}, names=names)
    tests = _tests_by_op(test_class)
    channel.write("ready\n")
    for line in sys.stdin:
        op = line.strip()
        if not op:
            break
        del suite.RECORDS[:]
        outcomes = {}
        for method in sorted(tests.get(op, [])):
            test = test_class(method)
            result = unittest.TestResult()
            recorded = len(suite.RECORDS)
            test.run(result)
            outcomes[method] = _outcome(result, test)
            if result.errors and len(suite.RECORDS) == recorded:  # raised before any sample was checked
                outcomes[method + ":traceback"] = result.errors[0][1][-2000:]
        answer = {"op": op, "records": [record.to_dict() for record in suite.RECORDS], "tests": outcomes}
        channel.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
