"""The network graph: tensors, nodes, the Network object, and ops/ (every op's shape rule and kernel)."""
