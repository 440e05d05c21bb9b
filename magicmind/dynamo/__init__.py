"""torch.compile(model, backend="magicmind"): MagicMind subgraphs of a TorchDynamo graph (see backend.py)."""
from .backend import CompiledGraph, graphs, magicmind_backend  # noqa: F401
