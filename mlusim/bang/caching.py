"""numba compilation with an on-disk cache that also notices changes to mlusim.bang and to device functions, and
with a poll at every loop of kernel code so that a kernel can be stopped (mlusim.bang.cancel).

numba keys a cached function on its own bytecode only; code it calls (intrinsics, device functions) is linked in,
so a cached kernel would keep running old intrinsics after an upgrade. The key here adds a hash of this package's
sources and of the bytecode of the device functions a kernel reaches.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numba
from numba.core import ir, ir_utils
from numba.core.analysis import compute_cfg_from_blocks
from numba.core.caching import FunctionCache
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.untyped_passes import IRProcessing

from . import cancel

_PACKAGE_HASH = hashlib.sha256(b"".join(path.read_bytes() for path in sorted(Path(__file__).parent.glob("*.py"))))


class _SaltedCache(FunctionCache):
    def __init__(self, py_func, salt: bytes):
        super().__init__(py_func)
        self._salt = hashlib.sha256(_PACKAGE_HASH.digest() + salt).hexdigest()

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._salt,)


@register_pass(mutates_CFG=False, analysis_only=False)
class PollLoops(FunctionPass):
    """Put a call of `cancel.poll()` at the head of every loop, so that no loop of kernel code runs unstoppably."""

    _name = "mlusim_bang_poll_loops"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks = state.func_ir.blocks
        headers = {loop.header for loop in compute_cfg_from_blocks(blocks).loops().values()}
        for label in headers:
            block = blocks[label]
            loc = block.loc
            function = ir.Var(block.scope, ir_utils.mk_unique_var("$bang_poll_fn"), loc)
            result = ir.Var(block.scope, ir_utils.mk_unique_var("$bang_poll"), loc)
            block.body[0:0] = [ir.Assign(ir.Global("bang_poll", cancel.poll, loc), function, loc),
                               ir.Assign(ir.Expr.call(function, (), (), loc), result, loc)]
        return bool(headers)


class PollingCompiler(CompilerBase):
    """numba's nopython pipeline plus PollLoops."""

    def define_pipelines(self):
        manager = DefaultPassBuilder.define_nopython_pipeline(self.state)
        manager.add_pass_after(PollLoops, IRProcessing)
        manager.finalize()
        return [manager]


def jit(fn=None, *, salt: bytes = b"", nogil: bool = True, polls: bool = False):
    """numba.njit(nogil=True) with the salted on-disk cache (the decorator of every compiled bang function);
    `polls`: stop-polls at every loop head (kernel bodies and device functions, whose loops are the user's)."""
    if fn is None:
        return lambda f: jit(f, salt=salt, nogil=nogil, polls=polls)
    options = {"nogil": nogil}
    if polls:
        options["pipeline_class"] = PollingCompiler
    dispatcher = numba.njit(**options)(fn)
    dispatcher._cache = _SaltedCache(fn, salt)
    return dispatcher
