// Build a model in C++ as the release's builder samples do: parse ONNX, set the input dims, calibrate int8 with
// the program's own ICalibData, build, serialize. Usage: build_int8 MODEL.onnx OUT.mm
#include <mm_builder.h>
#include <mm_calibrator.h>
#include <mm_parser.h>

#include <iostream>
#include <random>
#include <vector>

using namespace magicmind;

class RandomImages : public ICalibData {
 public:
  RandomImages() : data_(2 * 3 * 32 * 32) {}
  Dims GetShape() const override { return Dims({2, 3, 32, 32}); }
  DataType GetDataType() const override { return DataType::FLOAT32; }
  void *GetSample() override { return data_.data(); }
  Status Next() override {
    if (batch_ >= 3) return Status(error::Code::OUT_OF_RANGE, "no more batches");
    std::mt19937 generator(batch_++);
    std::normal_distribution<float> normal;
    for (float &v : data_) v = normal(generator);
    return Status::OK();
  }
  Status Reset() override {
    batch_ = 0;
    return Status::OK();
  }
  int batches() const { return batch_; }

 private:
  std::vector<float> data_;
  int batch_ = 0;
};

int main(int argc, char **argv) {
  if (argc != 3) return 1;
  INetwork *network = CreateINetwork();
  auto parser = CreateIParser<ModelKind::kOnnx, std::string>();
  Status status = parser->Parse(network, argv[1]);
  if (!status.ok()) { std::cout << "parse: " << status << std::endl; return 2; }
  network->GetInput(0)->SetDimension(Dims({2, 3, 32, 32}));
  IBuilderConfig *config = CreateIBuilderConfig();
  status = config->ParseFromString("{\"precision_config\": {\"precision_mode\": \"qint8_mixed_float16\"}}");
  if (!status.ok()) { std::cout << "config: " << status << std::endl; return 3; }
  Status bad = config->ParseFromString("{\"no_such_key\": 1}");
  std::cout << "bad key: code " << static_cast<int>(bad.code()) << std::endl;
  RandomImages images;
  ICalibrator *calibrator = CreateICalibrator(&images);
  calibrator->SetQuantizationAlgorithm(QuantizationAlgorithm::LINEAR_ALGORITHM);
  status = calibrator->Calibrate(network, config);
  if (!status.ok()) { std::cout << "calibrate: " << status << std::endl; return 4; }
  std::cout << "calibrated on " << images.batches() << " batches" << std::endl;
  IBuilder *builder = CreateIBuilder();
  IModel *model = builder->BuildModel("int8", network, config);
  if (!model) { std::cout << "build failed" << std::endl; return 5; }
  status = model->SerializeToFile(argv[2]);
  if (!status.ok()) { std::cout << "serialize: " << status << std::endl; return 6; }
  std::cout << "built " << model->GetInputDimension(0) << " -> " << model->GetOutputDimension(0) << std::endl;
  model->Destroy();
  builder->Destroy();
  calibrator->Destroy();
  parser->Destroy();
  config->Destroy();
  network->Destroy();
  return 0;
}
