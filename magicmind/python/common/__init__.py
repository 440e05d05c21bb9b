"""magicmind.python.common."""
