"""The module a fused partition becomes: MagicMind models of the subgraph, built on first use: one mutable model
when torch left axes symbolic (a dynamic batch), else one per input shape."""
from __future__ import annotations

import json
import threading
import weakref

import torch

from ..status import MagicMindError
from .subgraph import BuiltSubgraph, build_model, export_onnx


#: the largest extent of a symbolic axis (torch's sizes are int64; the model's dims int32)
MAX_EXTENT = 2 ** 31 - 1


class MagicMindSubgraph(torch.nn.Module):
    """A partition of the compiled graph: `frozen` gives the positions of its arguments that are model weights
    (exported as constants); the rest are its live inputs. `eager` (the partition's own GraphModule) runs where a
    model cannot: an empty tensor, inputs on different devices."""

    def __init__(self, name: str, eager, frozen: set, config_text: str, calibrate: bool, symbolic=None):
        super().__init__()
        self.name = name
        self.eager = eager
        self.frozen = frozen
        #: argument position -> the axes torch left symbolic (a dynamic batch): one mutable model serves them all
        self.symbolic = {i: tuple(axes) for i, axes in (symbolic or {}).items() if axes and i not in frozen}
        self.config_text = config_text
        self.calibrate = calibrate
        self.count = len([n for n in eager.graph.nodes if n.op == "placeholder"])
        self.built: dict = {}
        #: calls that ran a MagicMind model / ran eagerly (reports and tests read them)
        self.model_calls = 0
        self.eager_calls = 0
        self._lock = threading.Lock()

    def _key(self, args) -> tuple:
        live = tuple((tuple(-1 if axis in self.symbolic.get(i, ()) else size for axis, size in enumerate(a.shape)),
                      a.dtype) for i, a in enumerate(args) if i not in self.frozen)
        weights = tuple((id(a), a._version) for i, a in enumerate(args) if i in self.frozen)
        return live, weights

    def _config(self, live_shapes) -> str:
        """The BuilderConfig text: mutable on the symbolic axes (any extent), fixed on the others."""
        if not self.symbolic:
            return self.config_text
        values = json.loads(self.config_text)
        values["graph_shape_mutable"] = True
        values["dim_range"] = {str(j): {"min": [1 if d == -1 else d for d in shape],
                                        "max": [MAX_EXTENT if d == -1 else d for d in shape]}
                               for j, (shape, _) in enumerate(live_shapes)}
        return json.dumps(values, sort_keys=True)

    def _cached(self, key, args):
        """The model built for `key` if its weights are these very tensors. An id outlives its tensor: torch reuses
        a compiled graph for another model of the same shapes, whose new weights can get a dead one's id (and
        version 0), so the entry also holds weak references to the weights it was built from."""
        found = self.built.get(key)
        if found is not None and all(ref() is args[i] for i, ref in found.weights):
            return found
        return None

    def build(self, args) -> BuiltSubgraph:
        """The model for these arguments' shapes and weights (built, or read from the disk cache)."""
        key = self._key(args)
        found = self._cached(key, args)
        if found is not None:
            return found
        with self._lock:
            found = self._cached(key, args)
            if found is None:
                frozen = {i: args[i] for i in self.frozen}
                live = [a for i, a in enumerate(args) if i not in self.frozen]
                positions = [i for i in range(len(args)) if i not in self.frozen]
                dynamic = {j: self.symbolic[i] for j, i in enumerate(positions) if i in self.symbolic}
                onnx_bytes, as_tuple = export_onnx(self.eager, self.count, frozen, live, dynamic)
                calibration = [a.detach().cpu().numpy() for a in live] if self.calibrate else []
                model = build_model(self.name, onnx_bytes, self._config(key[0]), calibration)
                stale = [k for k in self.built if k[1] != key[1]]
                for old in stale:  # other weights, or these changed in place: their models are stale
                    del self.built[old]
                weights = [(i, weakref.ref(args[i])) for i in sorted(self.frozen)]
                found = self.built[key] = BuiltSubgraph(model, as_tuple, weights)
        return found

    def forward(self, *args):
        live = [a for i, a in enumerate(args) if i not in self.frozen]
        device = live[0].device if live else None
        usable = device is not None and device.type == "mlu" and \
            all(a.device == device and a.numel() > 0 for a in args if isinstance(a, torch.Tensor))
        if usable:
            try:
                result = self.build(args).run(self.name, live)
            except MagicMindError as error:
                raise RuntimeError(f"magicmind: {error}") from None
            if result is not None:
                self.model_calls += 1
                return result
        self.eager_calls += 1
        return self.eager(*args)
