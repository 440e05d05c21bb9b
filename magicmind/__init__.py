"""magicmind: a clone of Cambricon's MagicMind inference engine over the simulated MLU (front end, floor 4).

Programs import it by MagicMind's own paths (`import magicmind.python.runtime as mm`,
`magicmind.python.runtime.parser.Parser`, `magicmind.python.common.types`, `magicmind.python.runtime.model.Model`,
`magicmind.python.cc._pywrap_runtime`); the modules at this level hold the implementation:

  status, enums, dtypes, dims   Status codes and errors, the enum types, numpy <-> DataType, Dims
  graph/                        Network, its tensors and nodes; ops/: every op's shape rule and kernel
  build/                        BuilderConfig, the Builder and its passes, precision and calibration
  model/                        the built Model and its serialized form
  runtime/                      System, Device, Engine, Context, run-time tensors, profiling
  parsers/                      ONNX and TorchScript front ends
  dynamo/                       torch.compile(backend="magicmind"): MagicMind subgraphs of a torch graph

It sits on cnrt (queues, device memory, copies) and the mlusim core (the submission builder, the cost model);
it never imports torch_mlu. See docs/magicmind.md.
"""
