"""Front ends that read framework models into a Network: ONNX (the onnx package) and TorchScript (torch)."""
