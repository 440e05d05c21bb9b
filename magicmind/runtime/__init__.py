"""The run side: System, Device, queues, run-time tensors, Engine and Context, shape and memory plans."""
