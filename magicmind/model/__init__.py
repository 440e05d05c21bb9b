"""The built model (`mm.Model`) and its serialized form."""
