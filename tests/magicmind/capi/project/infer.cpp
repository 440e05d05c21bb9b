// Inference the way the release's C++ samples run a model (infer_cpp/src/infer.cpp): device memory from
// cnrtMalloc given to the tensors, InferOutputShape, Enqueue on a cnrt queue, cnrtMemcpy in and out.
// Usage: infer MODEL INPUT.bin OUTPUT.bin BATCH
#include <cnrt.h>
#include <mm_runtime.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <vector>

using namespace magicmind;

#define CHECK_CNRT(call) do { cnrtRet_t r = (call); if (r != CNRT_RET_SUCCESS) { \
    std::cout << #call << " failed: " << static_cast<int>(r) << std::endl; return 2; } } while (0)
#define MM_CHECK(status) do { auto s = (status); if (s != Status::OK()) { \
    std::cout << "[" << __LINE__ << "] mm failure: " << s << std::endl; return 3; } } while (0)

int main(int argc, char **argv) {
  if (argc != 5) return 1;
  CHECK_CNRT(cnrtSetDevice(0));
  cnrtQueue_t queue;
  CHECK_CNRT(cnrtQueueCreate(&queue));
  IModel *bad = CreateIModel();
  Status missing = bad->DeserializeFromFile("/no/such/model");
  std::cout << "missing file: code " << static_cast<int>(missing.code()) << std::endl;
  bad->Destroy();

  IModel *model = CreateIModel();
  MM_CHECK(model->DeserializeFromFile(argv[1]));
  std::cout << "Input number : " << model->GetInputNum() << std::endl;
  for (int i = 0; i < model->GetInputNum(); ++i)
    std::cout << "input[" << i << "] : " << model->GetInputNames()[i] << " " << model->GetInputDimension(i)
              << ", data type [" << model->GetInputDataType(i) << "]" << std::endl;
  IModel::EngineConfig config;
  config.SetDeviceType("MLU");
  config.SetConstDataInit(true);
  IEngine *engine = model->CreateIEngine(config);
  if (!engine) return 4;
  size_t const_bytes = 0;
  MM_CHECK(engine->QueryConstDataSize(&const_bytes));
  std::cout << "const data: " << (const_bytes > 0 ? "yes" : "no") << std::endl;
  IContext *context = engine->CreateIContext();
  std::vector<IRTTensor *> inputs, outputs;
  MM_CHECK(context->CreateInputTensors(&inputs));
  MM_CHECK(context->CreateOutputTensors(&outputs));

  std::vector<int64_t> dims = model->GetInputDimension(0).GetDims();
  if (dims[0] == -1) dims[0] = std::atoi(argv[4]);
  MM_CHECK(inputs[0]->SetDimensions(Dims(dims)));
  void *in_ptr = nullptr, *out_ptr = nullptr;
  if (inputs[0]->GetMemoryLocation() == TensorLocation::kMLU) {
    CHECK_CNRT(cnrtMalloc(&in_ptr, inputs[0]->GetSize()));
    MM_CHECK(inputs[0]->SetData(in_ptr));
  }
  MM_CHECK(context->InferOutputShape(inputs, outputs));
  CHECK_CNRT(cnrtMalloc(&out_ptr, outputs[0]->GetSize()));
  MM_CHECK(outputs[0]->SetData(out_ptr));
  std::cout << "output dims " << outputs[0]->GetDimensions() << std::endl;

  std::vector<char> host_in(inputs[0]->GetSize()), host_out(outputs[0]->GetSize()), again(outputs[0]->GetSize());
  std::ifstream(argv[2], std::ios::binary).read(host_in.data(), host_in.size());
  CHECK_CNRT(cnrtMemcpy(inputs[0]->GetMutableData(), host_in.data(), host_in.size(), CNRT_MEM_TRANS_DIR_HOST2DEV));
  MM_CHECK(context->Enqueue(inputs, outputs, queue));
  CHECK_CNRT(cnrtQueueSync(queue));
  CHECK_CNRT(cnrtMemcpy(host_out.data(), outputs[0]->GetMutableData(), host_out.size(),
                        CNRT_MEM_TRANS_DIR_DEV2HOST));
  std::ofstream(argv[3], std::ios::binary).write(host_out.data(), host_out.size());

  std::vector<IRTTensor *> made;  // the form where MagicMind allocates the outputs
  MM_CHECK(context->Enqueue(inputs, &made, queue));
  CHECK_CNRT(cnrtQueueSync(queue));
  CHECK_CNRT(cnrtMemcpy(again.data(), made[0]->GetMutableData(), again.size(), CNRT_MEM_TRANS_DIR_DEV2HOST));
  std::cout << "allocated outputs " << (again == host_out ? "match" : "differ") << std::endl;

  std::vector<IRTTensor *> wrong;
  Status status = context->Enqueue(wrong, outputs, queue);
  std::cout << "no inputs: code " << static_cast<int>(status.code()) << std::endl;
  for (IRTTensor *t : made) t->Destroy();
  for (IRTTensor *t : inputs) t->Destroy();
  for (IRTTensor *t : outputs) t->Destroy();
  cnrtFree(in_ptr);
  cnrtFree(out_ptr);
  context->Destroy();
  engine->Destroy();
  model->Destroy();
  cnrtQueueDestroy(queue);
  std::cout << "done" << std::endl;
  return 0;
}
