"""BANG sample programs (like the samples of a Neuware install): `python -m cnrt.samples.vector_add`."""
import contextlib


@contextlib.contextmanager
def queue_for(queue=None):
    """`queue`, or a queue of the current device made for the block and destroyed after it (a sample leaks
    nothing: run it under MLUSIM_SANITIZE=all)."""
    import cnrt

    if queue is not None:
        yield queue
        return
    made = cnrt.queueCreate()
    try:
        yield made
    finally:
        cnrt.queueDestroy(made)
