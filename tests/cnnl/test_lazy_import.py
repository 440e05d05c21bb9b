"""`import cnnl` is cheap: op modules, their kernels and numba are imported on first use (cnnl/__init__.py), while
every function stays visible (dir, hasattr, getattr, star import, the API registry). Each check that depends on
what is imported runs in a fresh interpreter."""
import json
import subprocess
import sys

import cnnl
from cnnl import function_index
from cnnl._function_index import _NAMES


def _fresh(code: str) -> dict:
    """Run `code` (which sets `facts`) in a fresh interpreter; the facts it printed."""
    script = "import json, sys\n" + code + "\nprint(json.dumps(facts))\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def _loaded(prefix: str) -> str:
    return f"sorted(m for m in sys.modules if m.startswith({prefix!r}))"


def test_the_function_index_is_current():
    """Every name an op module registers is indexed under that module (else: python -m cnnl.function_index)."""
    facts = _fresh("from cnnl import function_index\nfacts = function_index.collect()")
    stale = {module: sorted(set(names) ^ set(_NAMES.get(module, "").split())) for module, names in facts.items()}
    assert {module: names for module, names in stale.items() if names} == {}, \
        "cnnl/_function_index.py is stale: run python -m cnnl.function_index"
    assert function_index.render(facts) == function_index.INDEX_FILE.read_text()


def test_import_loads_no_op_module_and_no_numba():
    facts = _fresh(f"import cnnl\nfacts = {{'ops': {_loaded('cnnl.ops.')}, 'kernels': {_loaded('cnnl.kernels.')}, "
                   "'numba': 'numba' in sys.modules, 'torch': 'torch' in sys.modules, "
                   "'handle': callable(cnnl.cnnlCreate), 'enum': cnnl.CNNL_DTYPE_FLOAT}")
    assert facts == {"ops": [], "kernels": [], "numba": False, "torch": False, "handle": True, "enum": 2}


_ADD = """
import numpy as np
import cnnl, cnrt
handle, queue = cnnl.create(), cnrt.queueCreate()
cnnl.setQueue(handle, queue)

def add(dtype, values):
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, dtype, [len(values)])
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    a, c = cnrt.malloc(values.nbytes), cnrt.malloc(values.nbytes)
    cnrt.memcpy(a, values, values.nbytes, cnrt.cnrtMemcpyHostToDev)
    cnnl.opTensor(handle, op, 1.0, desc, a, 1.0, desc, a, None, 0, 0.0, desc, c)  # (alpha2 != 1 compiles a kernel)
    cnrt.queueSync(queue)
    out = np.empty_like(values)
    cnrt.memcpy(out, c, values.nbytes, cnrt.cnrtMemcpyDevToHost)
    return out.astype(np.float64).tolist()
"""


def test_a_float32_op_needs_no_numba_and_a_half_op_loads_it():
    facts = _fresh(_ADD + f"""
float_sum = add(cnnl.CNNL_DTYPE_FLOAT, np.array([1.5, -2.0, 3.25], np.float32))
facts = {{'float': float_sum, 'ops': {_loaded('cnnl.ops.')}, 'numba_after_float': 'numba' in sys.modules}}
facts['half'] = add(cnnl.CNNL_DTYPE_HALF, np.array([1.5, -2.0, 65504.0], np.float16))
facts['numba_after_half'] = 'numba' in sys.modules
""")
    assert facts["float"] == [3.0, -4.0, 6.5]
    assert facts["ops"] == ["cnnl.ops.binary"]
    assert facts["numba_after_float"] is False
    assert facts["half"] == [3.0, -4.0, float("inf")]  # 2 * 65504 overflows half
    assert facts["numba_after_half"] is True


def test_every_registered_function_is_visible():
    registered = set(cnnl._api.functions)  # loads every op module
    assert len(registered) > 600
    names = set(dir(cnnl))
    assert registered <= names
    for name in ("cnnlOpTensor", "opTensor", "cnnlMatMul_v2", "cnnlConvolutionForward", "cnnlFlashAttentionForward"):
        assert hasattr(cnnl, name) and getattr(cnnl, name) is cnnl._api.functions[name]
    assert not hasattr(cnnl, "cnnlNoSuchFunction")
    assert cnnl.cnnlMatMulDescriptor_t.__name__ == "MatMulDescriptor"
    assert cnnl.binary.__name__ == "cnnl.ops.binary"  # the op modules stay reachable as attributes


def test_submodules_are_attributes_in_a_fresh_interpreter():
    facts = _fresh("import cnnl\nfacts = [cnnl.kernels.cast.__module__, cnnl.ops.__name__, cnnl.opcall.__name__, "
                   "len([m for m in sys.modules if m.startswith('cnnl.ops.')])]")
    assert facts == ["cnnl.kernels.cast", "cnnl.ops", "cnnl.opcall", 0]


def test_star_import_and_lookup_in_a_fresh_interpreter():
    facts = _fresh(f"""
import cnnl
from cnnl.status import api
found = api.lookup('cnnlSoftmaxForward') is not None
ops_after_lookup = {_loaded('cnnl.ops.')}
lookup = found and api.lookup('cnnlNoSuchFunction') is None
namespace = {{}}
exec('from cnnl import *', namespace)
facts = {{'lookup': lookup, 'ops_after_lookup': ops_after_lookup, 'star': 'cnnlSoftmaxForward' in namespace,
         'star_types': 'cnnlPoolingDescriptor_t' in namespace, 'all_ops': len({_loaded('cnnl.ops.')})}}
""")
    assert facts["lookup"] is True
    assert "cnnl.ops.softmax" in facts["ops_after_lookup"] and len(facts["ops_after_lookup"]) < 5
    assert facts["star"] and facts["star_types"]
    assert facts["all_ops"] >= len(cnnl.OP_MODULES)


def test_a_name_missing_from_the_index_still_resolves():
    """The index only saves imports: a function it lacks (a stale index) is found by importing every op module."""
    facts = _fresh("""
import cnnl
cnnl._FUNCTION_MODULES.pop('cnnlTranspose_v2')
cnnl._FUNCTION_MODULES.pop('transpose_v2')
facts = {'found': callable(cnnl.transpose_v2), 'every_op_loaded': cnnl._all_loaded}
""")
    assert facts == {"found": True, "every_op_loaded": True}


def test_threads_loading_modules_at_once():
    """First uses from several threads at once, one importing an op module directly: all resolve, none hangs."""
    facts = _fresh("""
import importlib, threading
import cnnl
names = ['cnnlSoftmaxForward', 'cnnlMatMul', 'cnnlPoolingForward', 'cnnlBatchNormForwardInference',
         'cnnlConvolutionForward', 'cnnlTranspose_v2', 'cnnlReduce', 'cnnlCreateActivationDescriptor']
found, errors = [], []
def first_use(name):
    try:
        found.append(callable(getattr(cnnl, name)))
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=first_use, args=(name,)) for name in names]
threads.append(threading.Thread(target=importlib.import_module, args=('cnnl.ops.batch_norm',)))
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(120)
facts = {'found': found, 'errors': errors, 'alive': sum(thread.is_alive() for thread in threads)}
""")
    assert facts == {"found": [True] * 8, "errors": [], "alive": 0}
