"""The CNNL ops, one module per family; importing a module registers its functions with the API."""
