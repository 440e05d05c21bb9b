"""MagicMind's Python package path (`magicmind.python.runtime`, `magicmind.python.common`, `magicmind.python.cc`)."""
