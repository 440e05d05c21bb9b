"""magicmind.python.cc: the module paths of MagicMind's pybind extension."""
