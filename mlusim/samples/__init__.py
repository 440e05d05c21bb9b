"""BANG sample programs (like the samples of a Neuware install): `python -m mlusim.samples.vector_add`."""
