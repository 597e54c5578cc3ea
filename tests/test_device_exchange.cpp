// GradientExchange for a model on a device, without a GPU: the host-backed runtime plays the
// device, communicator doubles play the other rank. Each of the three routes (NCCL-like device
// collectives, device pointers to a CUDA-aware MPI, host staging) must hand the optimizer the
// same averaged gradients, give each collective memory it can use, and sync weights.
#include <doctest/doctest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "device_model_double.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/trainer.hpp"
#include "test_support.hpp"

using namespace dtnn;
using dtnn::test::DeviceModel;
using dtnn::test::Recorder;

namespace {

class Done final : public CommRequest {
 public:
  void wait() override {}
  bool test() override { return true; }
};

// What both doubles do: this process plays rank 1 of 2, whose partner holds the same gradients
// (an allreduce doubles them) and, as root, `partner_value` everywhere.
struct TwinCollectives {
  double partner_value = 7;
  std::vector<const void*> seen;  // the memory each collective was given
  void reduce(void* data, std::size_t count) {
    seen.push_back(data);
    for (std::size_t i = 0; i < count; ++i) static_cast<double*>(data)[i] *= 2;
  }
  void broadcast(void* data, std::size_t count, int root) {
    seen.push_back(data);
    if (root != 1)
      for (std::size_t i = 0; i < count; ++i) static_cast<double*>(data)[i] = partner_value;
  }
};

class TwinHost final : public Communicator {
 public:
  TwinCollectives twin;
  bool cuda_aware = false;
  int rank() const override { return 1; }
  int size() const override { return 2; }
  void allreduce_sum(void* data, std::size_t count, DType, std::string_view) override {
    twin.reduce(data, count);
  }
  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType,
                                              std::string_view) override {
    twin.reduce(data, count);
    return std::make_unique<Done>();
  }
  void broadcast(void* data, std::size_t count, DType, int root, std::string_view) override {
    twin.broadcast(data, count, root);
  }
  void allgather(const void*, void*, std::size_t, DType, std::string_view) override {}
  void barrier(std::string_view) override {}
  bool accepts_memory_of(Device d) const override { return d == Device::cpu || cuda_aware; }
  std::string describe() const override { return "twin host ranks"; }
};

class TwinDevice final : public DeviceCommunicator {
 public:
  TwinCollectives twin;
  void open(Communicator&) override {}
  int rank() const override { return 1; }
  int size() const override { return 2; }
  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType,
                                              std::string_view) override {
    twin.reduce(data, count);
    return std::make_unique<Done>();
  }
  void broadcast(void* data, std::size_t count, DType, int root, std::string_view) override {
    twin.broadcast(data, count, root);
  }
  std::string describe() const override { return "twin device ranks"; }
};

// Gradient j of parameter p: 10 (p + 1) + j.
double gradient(std::size_t p, std::int64_t j) { return 10.0 * static_cast<double>(p + 1) + j; }

// One step through the exchange with this rank's weight w; the recorder's gradients come back.
std::vector<std::vector<double>> step(Model& m, GradientExchange& exchange, double w) {
  const auto params = m.parameters();
  for (std::size_t p = 0; p < params.size(); ++p)
    for (std::int64_t j = 0; j < params[p].grad.numel(); ++j)
      params[p].grad.data<double>()[j] = gradient(p, j);
  Recorder recorder;
  recorder.build(params);
  exchange.begin(w);
  for (std::size_t layer = m.num_layers(); layer-- > 0;) {  // backward's order
    const auto [first, end] = m.parameter_range(layer);
    exchange.gradients_ready(first, end - first);
  }
  exchange.finish(recorder);
  for (const Parameter& p : params)  // taken over by the exchange, as an update would
    for (std::int64_t j = 0; j < p.grad.numel(); ++j) CHECK(p.grad.data<double>()[j] == 0.0);
  return recorder.grads;
}

void check_averaged(const std::vector<std::vector<double>>& grads, double w) {
  REQUIRE(grads.size() == 2);
  for (std::size_t p = 0; p < 2; ++p) {
    REQUIRE(grads[p].size() == 5);
    for (std::size_t j = 0; j < 5; ++j)
      CHECK(grads[p][j] == doctest::Approx(2 * w * gradient(p, static_cast<std::int64_t>(j))));
  }
}

}  // namespace

TEST_CASE("device gradients: NCCL-like device collectives get device memory, and the host none") {
  DeviceModel d;
  TwinHost host;
  TwinDevice nccl;
  ExchangeOptions o;
  o.device_comm = &nccl;
  o.gpudirect = true;  // the device library wins
  for (const bool blocking : {false, true}) {
    CAPTURE(blocking);
    o.blocking = blocking;
    GradientExchange exchange(d.model, host, o);
    CHECK(exchange.route() == ExchangeRoute::device_library);
    nccl.twin.seen.clear();
    check_averaged(step(d.model, exchange, 0.25), 0.25);
    CHECK(host.twin.seen.empty());
    REQUIRE(nccl.twin.seen.size() == exchange.num_buckets());
    for (const void* p : nccl.twin.seen) CHECK(d.runtime().owns(p));
    CHECK(d.runtime().synchronizations == 0);  // ordered on streams: the host never waits
  }
}

TEST_CASE("device gradients: gpudirect hands device memory to a CUDA-aware MPI after a sync") {
  DeviceModel d;
  TwinHost host;
  host.cuda_aware = true;
  ExchangeOptions o;
  o.gpudirect = true;
  o.bucket_bytes = 40;  // one parameter (5 doubles) per bucket: two buckets
  GradientExchange exchange(d.model, host, o);
  CHECK(exchange.route() == ExchangeRoute::device_pointers);
  CHECK(exchange.num_buckets() == 2);
  check_averaged(step(d.model, exchange, 0.5), 0.5);
  REQUIRE(host.twin.seen.size() == 2);
  for (const void* p : host.twin.seen) CHECK(d.runtime().owns(p));
  CHECK(d.runtime().synchronizations == 2);  // one before each bucket's allreduce
}

TEST_CASE("device gradients: otherwise they are staged through pinned host memory") {
  DeviceModel d;
  TwinHost host;  // not CUDA-aware
  for (const bool gpudirect : {false, true}) {
    CAPTURE(gpudirect);
    ExchangeOptions o;
    o.gpudirect = gpudirect;  // asked for, but MPI cannot take device memory: staged all the same
    host.twin.seen.clear();
    {
      GradientExchange exchange(d.model, host, o);
      CHECK(exchange.route() == ExchangeRoute::host_staged);
      CHECK(d.runtime().pins == 1);
      check_averaged(step(d.model, exchange, 0.125), 0.125);
      REQUIRE(!host.twin.seen.empty());
      for (const void* p : host.twin.seen) CHECK_FALSE(d.runtime().owns(p));
    }
    CHECK(d.runtime().pins == 0);  // the staging buffer is unpinned with the exchange
  }
}

TEST_CASE("device weights: broadcast and averaging go by the same routes") {
  DeviceModel d;
  TwinHost host;
  host.cuda_aware = true;
  TwinDevice nccl;
  auto fill_values = [&](double v) {
    for (const Parameter& p : d.model.parameters())
      for (std::int64_t j = 0; j < p.value.numel(); ++j) p.value.data<double>()[j] = v + j;
  };
  auto values_are = [&](auto expected) {
    for (const Parameter& p : d.model.parameters())
      for (std::int64_t j = 0; j < p.value.numel(); ++j)
        CHECK(p.value.data<double>()[j] == doctest::Approx(expected(j)));
  };
  for (int route = 0; route < 3; ++route) {
    CAPTURE(route);
    ExchangeOptions o;
    if (route == 0) o.device_comm = &nccl;
    o.gpudirect = route == 1;
    host.cuda_aware = route == 1;
    GradientExchange exchange(d.model, host, o);
    CHECK(exchange.route() == (route == 0   ? ExchangeRoute::device_library
                               : route == 1 ? ExchangeRoute::device_pointers
                                            : ExchangeRoute::host_staged));
    fill_values(1);
    exchange.broadcast_weights(0);  // rank 0 holds 7 everywhere
    values_are([](std::int64_t) { return 7.0; });
    fill_values(1);
    exchange.broadcast_weights(1);  // this rank is the root: unchanged
    values_are([](std::int64_t j) { return 1.0 + j; });
    exchange.average_weights(0.25);  // both ranks hold 1 + j: 2 * 0.25 (1 + j)
    values_are([](std::int64_t j) { return 0.5 * (1.0 + j); });
  }
}

namespace {

// A metric that notes where the tensors it is given live.
class WhereMetric final : public Metric {
 public:
  WhereMetric(const dtnn::test::HostBackedRuntime& runtime, Device device)
      : runtime_(runtime), device_(device) {}
  std::string name() const override {
    return device_ == Device::cpu ? "where_host" : "where_device";
  }
  std::size_t num_totals() const override { return 2; }
  Device device() const override { return device_; }
  void accumulate(const Tensor& p, const Tensor& t, std::span<double> totals) const override {
    totals[0] += runtime_.owns(p.raw()) && runtime_.owns(t.raw()) ? 1 : 0;    // both on the device
    totals[1] += !runtime_.owns(p.raw()) && !runtime_.owns(t.raw()) ? 1 : 0;  // both on the host
  }
  // Batches seen where the metric expects them.
  double value(std::span<const double> totals) const override {
    return device_ == Device::cpu ? totals[1] : totals[0];
  }

 private:
  const dtnn::test::HostBackedRuntime& runtime_;
  Device device_;
};

// What a trainer needs besides a model and metrics: 8 synthetic samples of 5 features in 5
// classes, cross-entropy, sgd, one process, batches of 2.
struct TrainerParts {
  const Registry& plugins = test::plugins();
  std::shared_ptr<Dataset> dataset = plugins.create_as<Dataset>(
      "dataset", "synthetic",
      Params(
          nlohmann::json{
              {"input_shape", {5}}, {"classes", 5}, {"train_samples", 8}, {"test_samples", 0}},
          "synthetic"));
  std::shared_ptr<Loss> loss =
      plugins.create_as<Loss>("loss", "categorical_cross_entropy", Params());
  std::shared_ptr<Optimizer> sgd = plugins.create_as<Optimizer>("optimizer", "sgd", Params());
  LocalCommunicator comm;
  TrainerOptions options;
  TrainerParts() {
    options.batch_size = 2;
    options.evaluate = false;
    options.progress = ProgressStyle::none;
  }
  Trainer trainer(Model& model, std::vector<std::shared_ptr<Metric>> metrics) {
    return Trainer(model, *dataset, *sgd, *loss, std::move(metrics), {}, comm, options);
  }
};

}  // namespace

TEST_CASE("on a device, a device metric reads the predictions there, host metrics one host copy") {
  DeviceModel d;
  TrainerParts parts;
  parts.sgd->build(d.model.parameters());
  auto on_device = std::make_shared<WhereMetric>(d.runtime(), Device::cuda);
  auto on_host = std::make_shared<WhereMetric>(d.runtime(), Device::cpu);
  auto accuracy = parts.plugins.create_as<Metric>("metric", "categorical_accuracy", Params());
  Trainer trainer = parts.trainer(d.model, {on_device, on_host, accuracy});
  const std::vector<std::int64_t> batch = {0, 1};
  const int copies = d.runtime().copies;
  trainer.train_step(batch);
  // The prediction went to the host once, for the two host metrics (and the labels never).
  CHECK(d.runtime().copies == copies + 1);
  const EvalResult r = trainer.evaluate(Split::train, 0, 4);
  CHECK(r.metrics.at("where_device") == 2.0);  // two batches of 2, each seen on the device
  CHECK(r.metrics.at("where_host") == 2.0);    // and each on the host
  CHECK(r.samples == 4);
}

TEST_CASE("a device metric with a model on the cpu is refused by name") {
  DeviceModel d;  // for its runtime, which the metric double reads
  TrainerParts parts;
  ModelOptions o;
  o.dtype = DType::float64;
  o.max_batch = 2;
  Model cpu_model(
      parse_model_spec(nlohmann::json::parse(R"({"layers": [{"type": "fc", "units": 5}]})"),
                       "cpu.json"),
      o, Shape{5}, parts.plugins);
  const std::string e = test::error_of([&] {
    parts.trainer(cpu_model, {std::make_shared<WhereMetric>(d.runtime(), Device::cuda)});
  });
  CHECK(e == "trainer: metric 'where_device' reads cuda memory, but the model is on cpu");
}
