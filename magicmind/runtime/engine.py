"""mm Engine (IEngine) and its EngineConfig: the model's constants on a device, and the contexts that run it."""
from __future__ import annotations

import threading

import numpy as np

import cnrt

from ..status import Code, MagicMindError
from .plan import aligned


class EngineConfig:
    """Model.EngineConfig: `device_type` ("MLU"); `const_data_init` (C++ SetConstDataInit: upload the constants at
    engine creation rather than at the first context)."""

    def __init__(self):
        self._device_type = "MLU"
        self.const_data_init = False

    @property
    def device_type(self) -> str:
        return self._device_type

    @device_type.setter
    def device_type(self, value) -> None:
        if not isinstance(value, str) or value.upper() != "MLU":
            raise MagicMindError(Code.INVALID_ARGUMENT, f"EngineConfig.device_type: {value!r} (only \"MLU\")")
        self._device_type = "MLU"

    def set_device_type(self, value) -> None:
        self.device_type = value

    def set_const_data_init(self, value) -> None:
        self.const_data_init = bool(value)


class Engine:
    """IEngine: created by Model.create_i_engine(); create_i_context() makes a Context on the current device."""

    def __init__(self, model, config: EngineConfig):
        self.model = model
        self.program = model.program
        self.config = config
        self._lock = threading.Lock()
        self._consts: dict = {}  # device index -> (base address, {value id: offset})
        self._layout = {}
        total = 0
        used = {v for step in self.program.steps for v in step.ins} | set(self.program.outputs)
        for key, value in self.program.values.items():
            if value.const is not None and key in used and value.const.nbytes:
                self._layout[key] = total
                total += aligned(value.const.nbytes)
        self.const_bytes = total
        if config.const_data_init:
            self.constants(cnrt.getDevice())

    def query_const_data_size(self) -> int:
        """IEngine::QueryConstDataSize(): bytes of constants this engine keeps on each device."""
        return self.const_bytes

    def query_context_max_workspace_size(self, dims) -> int:
        """IEngine::QueryContextMaxWorkspaceSize(dims): the bytes a context needs for its intermediates (the
        memory plan's arena) when the inputs have these dims (a list of Dims or of lists)."""
        from . import plan as P
        from ..dims import Dims
        if not isinstance(dims, (list, tuple)) or len(dims) != len(self.program.inputs):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"query_context_max_workspace_size: give the dims of each "
                                                        f"of the {len(self.program.inputs)} inputs")
        shapes = [tuple(d.GetDims()) if isinstance(d, Dims) else tuple(int(v) for v in d) for d in dims]
        names = [self.program.values[k].name for k in self.program.inputs]
        P.check_range(self.program, shapes, names)
        shape_plan = P.plan_shapes(self.program, shapes)
        if shape_plan.dynamic:
            raise MagicMindError(Code.UNAVAILABLE, "query_context_max_workspace_size: the model's shapes depend on "
                                                   "its data")
        return P.plan_memory(self.program, shape_plan).arena_bytes

    def constants(self, device: int) -> tuple:
        """(base address, offsets) of the constants on `device`, copied there on first use."""
        with self._lock:
            found = self._consts.get(device)
            if found is not None:
                return found
            previous = cnrt.getDevice()
            cnrt.setDevice(device)
            try:
                base = cnrt.malloc(max(self.const_bytes, 1))
                if self.const_bytes:
                    staging = np.zeros(self.const_bytes, np.uint8)
                    for key, offset in self._layout.items():
                        data = np.ascontiguousarray(self.program.values[key].const).view(np.uint8).reshape(-1)
                        staging[offset:offset + data.size] = data
                    cnrt.memcpy(base, staging, staging.nbytes, cnrt.cnrtMemcpyHostToDev)
            finally:
                cnrt.setDevice(previous)
            found = self._consts[device] = (base, dict(self._layout))
            return found

    def create_i_context(self):
        """IEngine::CreateIContext(): a Context on the current device."""
        from .context import Context
        return Context(self, cnrt.getDevice())

    def destroy(self):
        with self._lock:
            for base, _ in self._consts.values():
                try:
                    cnrt.free(base)
                except Exception:
                    pass
            self._consts.clear()

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass
