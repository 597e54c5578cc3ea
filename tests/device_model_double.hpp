// A model whose parameters live on a "cuda" device without a GPU (the host-backed runtime and the
// test_weights layer double on "cuda"), and an optimizer that records the gradients it is handed:
// what the gradient-exchange tests (tests/test_device_exchange.cpp, under MPI tests/test_mpi.cpp)
// use.
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/registry.hpp"
#include "host_backed_runtime.hpp"

namespace dtnn::test {

// Keeps a host copy of each gradient the exchange hands over.
class Recorder final : public Optimizer {
 public:
  std::vector<std::vector<double>> grads;
  void build(std::span<const Parameter> parameters) override { grads.resize(parameters.size()); }
  void update(std::size_t index, const Parameter& p) override {
    const double* g = p.grad.data<double>();
    grads[index].assign(g, g + p.grad.numel());
  }
  double learning_rate() const override { return 0; }
  void set_learning_rate(double) override {}
};

// Two layers of 5 and the host-backed device: 2 parameters, on "cuda".
struct DeviceModel {
  InstalledDouble device;
  Registry registry{{DTNN_TEST_DOUBLES "/device"}};
  Model model;
  DeviceModel() : model(spec(), options(), Shape{5}, registry) {}
  static ModelSpec spec() {
    return parse_model_spec(
        nlohmann::json::parse(
            R"({"layers": [{"type": "test_weights"}, {"type": "test_weights"}]})"),
        "two.json");
  }
  static ModelOptions options() {
    ModelOptions o;
    o.device = Device::cuda;
    o.layout = Layout::nchw;
    o.dtype = DType::float64;
    o.max_batch = 2;
    return o;
  }
  HostBackedRuntime& runtime() { return *device.runtime; }
};

}  // namespace dtnn::test
