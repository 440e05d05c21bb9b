"""MagicMind's command-line tools: mm_build (and onnx_build, pytorch_build, caffe_build, tensorflow_build) and
mm_run, installed as console scripts; they use the public Python API only."""
