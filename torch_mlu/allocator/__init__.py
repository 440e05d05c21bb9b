"""The stream-ordered caching allocator behind every mlu tensor (caching.py: malloc, free, record_stream, release),
its pieces (blocks.py: segments, blocks, pools), statistics (stats.py), snapshots (snapshot.py) and the mode without
a cache (uncached.py: PYTORCH_NO_MLU_MEMORY_CACHING=1)."""
from .caching import CachingAllocator  # noqa: F401
from .stats import POOLS, format_size  # noqa: F401
