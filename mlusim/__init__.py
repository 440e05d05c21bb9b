"""The hardware core of the simulated MLU (floor 1 of docs/architecture.md): boards, memory, queues, the submission
builder, the kernel language, time. The features the environment asks for (the sanitizer, the trace) start here, at
the package's first import (mlusim.config)."""
from . import config as _config

_config.switch_on_features()
