"""Settings shared by the whole suite."""
from hypothesis import HealthCheck, settings

# numba compiles on first use: a deadline would flag the first example of every new signature.
settings.register_profile("mlusim", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile("mlusim")
