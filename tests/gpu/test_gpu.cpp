// dtnn_gpu_tests: the CUDA plugins on a real GPU. Every GPU layer against its CPU twin (same
// parameters from the same seed, forward and gradients, float64 and float32), the CPU and GPU
// optimizers' steps, a short Fashion-MNIST training on CPU and GPU to the same accuracy, and no
// device memory growth across steps. Without a usable GPU it exits with code 77, which CTest
// reports as skipped, after saying why.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dtnn/config.hpp"
#include "dtnn/device.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/testing/device_twin.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// The plugins beside this executable (the build tree's, or a bundle's: scripts/gpu-bundle.sh),
// DTNN_PLUGIN_PATH's first: the search order of `dtnn`, so the tests run wherever it does.
const Registry& plugins() {
  static const Registry registry(Registry::default_folders());
  return registry;
}

// A file of the source tree: from the folder the tests run in (the repository's root on the GPU
// machine, whose copy of the tree is elsewhere than the build's), else where the build found it.
std::filesystem::path source_file(const std::string& relative) {
  if (std::filesystem::exists(relative)) return relative;
  return std::filesystem::path(DTNN_TEST_SOURCE_DIR) / relative;
}

// The default experiment (configs/fashion_mnist_simplecnn.json), its model file's path made
// absolute, and Fashion-MNIST where DTNN_FASHION_MNIST_PATH says (a machine without Debian's).
json default_experiment() {
  const std::filesystem::path file =
      std::filesystem::absolute(source_file("configs/fashion_mnist_simplecnn.json"));
  json c = read_json_file(file);
  c["model"] = (file.parent_path() / c["model"].get<std::string>()).string();
  if (const char* path = std::getenv("DTNN_FASHION_MNIST_PATH")) c["dataset"]["path"] = path;
  return c;
}

// The largest |a - b| / (1 + |a|) over the elements (b copied back from wherever it is).
double max_difference(const Tensor& a, const Tensor& b) {
  REQUIRE(a.numel() == b.numel());
  return testing::max_relative_difference(a, b);
}

struct Twins {
  std::shared_ptr<Layer> cpu, gpu;
};

// A CPU layer and its GPU twin built alike (for the tests that look inside a layer).
Twins build_twins(const std::string& type, const json& params, const Shape& input, DType dtype,
                  std::int64_t batch) {
  LayerBuildContext ctx;
  ctx.input_shape = input;
  ctx.dtype = dtype;
  ctx.layout = Layout::nchw;
  ctx.max_batch = batch;
  ctx.seed = 11;
  ctx.registry = &plugins();
  Twins t;
  t.cpu = plugins().create_as<Layer>("layer", type, Params(params, type));
  t.cpu->build(ctx);
  ctx.device = Device::cuda;
  t.gpu = plugins().create_as<Layer>("layer", type, Params(params, type + " on cuda"), {},
                                     Device::cuda);
  t.gpu->build(ctx);
  return t;
}

// One twin check a CUDA layer declares in its traits (DTNN_CUDA_LAYER's "twin_checks").
struct Case {
  std::string type;
  json params;
  Shape input;                 // per sample, NCHW
  testing::TwinInputs inputs;  // "input_range", "tokens", "lengths"
};

// Every CUDA layer's twin checks, from the plugins' own traits: a new twin is checked here
// without an edit to this file (tests/test_registry.cpp makes each twin declare some).
std::vector<Case> layer_cases() {
  std::vector<Case> cases;
  for (const PluginRecord& r : plugins().records()) {
    if (r.kind != "layer" || r.device != Device::cuda) continue;
    for (const json& c : json::parse(r.traits_json).value("twin_checks", json::array())) {
      const json dims = c.at("input_nchw");
      Case k{r.name, c.value("params", json::object()), Shape::from(dims.begin(), dims.end()), {}};
      if (c.contains("input_range")) {
        k.inputs.lo = c["input_range"].at(0).get<double>();
        k.inputs.hi = c["input_range"].at(1).get<double>();
      }
      k.inputs.tokens = c.value("tokens", std::int64_t(0));
      k.inputs.lengths = c.value("lengths", std::vector<std::int64_t>{});
      cases.push_back(std::move(k));
    }
  }
  return cases;
}

// The conformance harness's twin check (dtnn/testing/device_twin.hpp): parameters at build
// exactly equal, everything else within the dtype's tolerance.
void compare_layer(const Case& c, DType dtype) {
  const std::string& type = c.type;
  const json& params = c.params;
  CAPTURE(type);
  CAPTURE(params.dump());
  const std::string dtype_name = to_string(dtype);
  CAPTURE(dtype_name);
  // Named before it runs: a case that crashes the program is the last one named in the log.
  std::printf("twin check: %s %s %s\n", type.c_str(), params.dump().c_str(), dtype_name.c_str());
  std::fflush(stdout);
  // A layer that throws (a cuDNN status, say) fails its own case and the others still run: the
  // first GPU session learns about every layer from one run.
  try {
    for (const testing::TwinCheck& t : testing::check_device_twin(
             plugins(), Device::cuda, type, Params(params, type), c.input, dtype,
             c.inputs.lengths.empty() ? 3 : std::int64_t(c.inputs.lengths.size()), c.inputs)) {
      CAPTURE(t.what);
      CHECK(t.error <=
            (t.what.starts_with("parameters at build") ? 0.0 : testing::twin_tolerance(dtype)));
    }
  } catch (const std::exception& e) {
    FAIL_CHECK("threw: " << std::string(e.what()));
  }
}

}  // namespace

TEST_CASE("every GPU layer matches its CPU twin, forward and gradients, in float64") {
  const std::vector<Case> cases = layer_cases();
  REQUIRE(cases.size() >= 14);
  for (const Case& c : cases) compare_layer(c, DType::float64);
}

TEST_CASE("every GPU layer matches its CPU twin in float32 (TF32 off)") {
  for (const Case& c : layer_cases()) compare_layer(c, DType::float32);
}

TEST_CASE("GPU dropout drops about a fraction 'rate' and scales the rest") {
  Twins t = build_twins("dropout", {{"rate", 0.3}}, Shape{1000}, DType::float64, 10);
  const Tensor x = testing::random_tensor(Shape{10, 1000}, DType::float64, 3);
  Tensor y = Tensor::empty(x.shape(), DType::float64, Layout::nchw, Device::cuda);
  t.gpu->forward(x.to(Device::cuda), y, Mode::train);
  const Tensor h = y.to(Device::cpu);
  int zeros = 0;
  for (std::int64_t i = 0; i < h.numel(); ++i) {
    const double v = h.data<double>()[i];
    if (v == 0)
      ++zeros;
    else
      CHECK(std::abs(v - x.data<double>()[i] / 0.7) < 1e-12);
  }
  CHECK(zeros > 2700);
  CHECK(zeros < 3300);
}

// Every loss with a CUDA twin, with each of these settings it declares the parameters of, against
// one-hot targets, and against class ids (one row ignored) where it takes an ignore_index.
struct LossCase {
  std::string name;
  json params;
  bool ids = false;
};

std::vector<LossCase> loss_cases() {
  const json settings[] = {json::object(),
                           {{"weights", {0.5, 2.0, 1.0, 1.5, 3.0}}},
                           {{"eps", 1e-4}},
                           {{"label_smoothing", 0.1}},
                           {{"smooth", 0.5}}};
  std::vector<LossCase> cases;
  for (const PluginRecord& r : plugins().records()) {
    if (r.kind != "loss" || r.device != Device::cuda) continue;
    const json declared = json::parse(r.parameters);
    for (const json& params : settings) {
      bool takes = true;
      for (const auto& [key, value] : params.items()) takes = takes && declared.contains(key);
      if (!takes) continue;
      cases.push_back({r.name, params});
      if (declared.contains("ignore_index")) cases.push_back({r.name, params, true});
    }
  }
  return cases;
}

// Predictions [8, 5] in (0, 1) with some at the clipping edges; targets one-hot rows, or the
// rows' class ids with row 2 at the ignored id (-1) and, with a bad_id, row 5 at 7 (no class).
std::pair<Tensor, Tensor> loss_inputs(DType dtype, bool ids, bool bad_id = false) {
  const Shape shape{8, 5};
  Tensor p = testing::random_tensor(shape, dtype, 6);
  Tensor t = Tensor::zeros(ids ? Shape{8} : shape, dtype, Layout::nchw);
  dispatch_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    T *pp = p.data<T>(), *tp = t.data<T>();
    for (std::int64_t i = 0; i < p.numel(); ++i) pp[i] = T(0.5) + T(0.49) * pp[i];
    pp[0] = T(0);
    pp[1] = T(1);
    for (std::int64_t r = 0; r < 8; ++r) {
      const std::int64_t k = (r * 3) % 5;
      if (ids)
        tp[r] = r == 2 ? T(-1) : T(k);
      else
        tp[r * 5 + k] = T(1);
    }
    if (bad_id) tp[5] = T(7);
  });
  return {p, t};
}

TEST_CASE("GPU losses match the CPU losses: value and gradients, weighted and floored too") {
  const std::vector<LossCase> cases = loss_cases();
  REQUIRE(cases.size() >= 14);  // cce and bce three ways each, mse, nll and kl_divergence 2x2 each
  for (const LossCase& c : cases)
    for (const DType dtype : {DType::float64, DType::float32}) try {
        const std::string& name = c.name;
        const std::string params = c.params.dump();
        CAPTURE(name);
        CAPTURE(params);
        CAPTURE(c.ids);
        const std::string dtype_name = to_string(dtype);
        CAPTURE(dtype_name);
        const double tolerance = dtype == DType::float64 ? 1e-12 : 1e-5;
        auto cpu = plugins().create_as<Loss>("loss", name, Params(c.params, name));
        auto gpu =
            plugins().create_as<Loss>("loss", name, Params(c.params, name), {}, Device::cuda);
        const auto [p, t] = loss_inputs(dtype, c.ids);
        const Shape& shape = p.shape();
        const Tensor pg = p.to(Device::cuda), tg = t.to(Device::cuda);
        const double lc = cpu->forward(p, t), lg = gpu->forward(pg, tg);
        CHECK(std::abs(lc - lg) <= tolerance * (1 + std::abs(lc)));
        Tensor dc = Tensor::empty(shape, dtype, Layout::nchw);
        Tensor dg = Tensor::empty(shape, dtype, Layout::nchw, Device::cuda);
        cpu->backward(p, t, dc);
        gpu->backward(pg, tg, dg);
        CHECK(max_difference(dc, dg) <= tolerance);
        if (cpu->has_softmax_gradient()) {
          REQUIRE(gpu->has_softmax_gradient());
          cpu->backward_through_softmax(p, t, dc);
          gpu->backward_through_softmax(pg, tg, dg);
          CHECK(max_difference(dc, dg) <= tolerance);
        }
        if (c.ids) {  // a target that is no class id: the CPU loss's error, word for word
          const auto [pb, tb] = loss_inputs(dtype, true, true);
          const std::string expected = test::error_of([&] { cpu->forward(pb, tb); });
          CHECK(expected.find("target 5 is 7") != std::string::npos);
          CHECK(test::error_of([&] { gpu->forward(pb.to(Device::cuda), tb.to(Device::cuda)); }) ==
                expected);
        }
      } catch (const std::exception& e) {
        FAIL_CHECK(c.name << " threw: " << std::string(e.what()));
      }
}

TEST_CASE("every GPU metric adds up the totals its CPU twin adds up") {
  std::vector<std::string> names;  // those with a twin (docs/gpu.md: all but three run on the host)
  for (const PluginRecord& r : plugins().records())
    if (r.kind == "metric" && r.device == Device::cpu &&
        plugins().find("metric", r.name, Device::cuda))
      names.push_back(r.name);
  REQUIRE(names.size() >= 11);
  for (const std::string& name : names) try {  // a twin that throws fails alone
      CAPTURE(name);
      auto cpu = plugins().create_as<Metric>("metric", name, Params());
      auto gpu = plugins().create_as<Metric>("metric", name, Params(), {}, Device::cuda);
      REQUIRE(gpu->device() == Device::cuda);
      for (const DType dtype : {DType::float32, DType::float64})
        for (const std::int64_t cols : {1, 2, 10})
          for (const std::int64_t rows : {1, 7, 300}) {  // more rows than a block has threads
            CAPTURE(dtype);
            CAPTURE(cols);
            CAPTURE(rows);
            cpu->set_classes(cols);
            gpu->set_classes(cols);
            const Shape shape{rows, cols};
            Tensor p = testing::random_tensor(shape, dtype, 20 + std::uint64_t(cols)),
                   t = Tensor::zeros(shape, dtype, Layout::nchw);
            dispatch_dtype(dtype, [&](auto z) {
              using T = decltype(z);
              T* pd = p.data<T>();
              for (std::int64_t r = 0; r < rows; ++r) {
                const std::int64_t k = cols == 1 ? 0 : (r * 7) % cols;
                t.data<T>()[r * cols + k] = cols == 1 ? T(r % 2) : T(1);
                if (r % 3 == 0) pd[r * cols + k] = T(2);                 // a sure match
                if (r % 5 == 0) pd[r * cols + cols - 1] = pd[r * cols];  // a tie: the first wins
              }
            });
            std::vector<double> tc(cpu->num_totals(), 0.0), tg(gpu->num_totals(), 0.0);
            REQUIRE(tc.size() == tg.size());
            cpu->accumulate(p, t, tc);
            gpu->accumulate(p.to(Device::cuda), t.to(Device::cuda), tg);
            for (std::size_t i = 0; i < tc.size(); ++i) {
              CAPTURE(i);
              CHECK(tg[i] == doctest::Approx(tc[i]).epsilon(1e-12));
            }
            CHECK(gpu->value(tg) == doctest::Approx(cpu->value(tc)).epsilon(1e-12));
          }
    } catch (const std::exception& e) {
      FAIL_CHECK(name << " threw: " << std::string(e.what()));
    }
}

TEST_CASE("GPU optimizers take the CPU optimizers' steps") {
  for (const json& o :
       {json{{"name", "sgd"}, {"momentum", 0.9}, {"nesterov", true}, {"decay", 0.01}},
        json{{"name", "sgd"}, {"rule", "pydtnn"}}, json{{"name", "adam"}, {"decay", 0.001}},
        json{{"name", "adam"}, {"rule", "pydtnn"}}, json{{"name", "rmsprop"}, {"decay", 0.01}},
        json{{"name", "rmsprop"}, {"rule", "pydtnn"}}, json{{"name", "nadam"}, {"decay", 0.001}},
        json{{"name", "nadam"}, {"rule", "pydtnn"}}}) {
    CAPTURE(o.dump());
    json params = o;
    params.erase("name");
    const std::string name = o["name"];
    auto cpu = plugins().create_as<Optimizer>("optimizer", name, Params(params, name));
    auto gpu =
        plugins().create_as<Optimizer>("optimizer", name, Params(params, name), {}, Device::cuda);
    Parameter pc{"w", testing::random_tensor(Shape{100}, DType::float64, 4), Tensor()};
    Parameter pg{"w", pc.value.to(Device::cuda), Tensor()};
    cpu->build(std::span<const Parameter>(&pc, 1));
    gpu->build(std::span<const Parameter>(&pg, 1));
    for (int step = 0; step < 3; ++step) {
      pc.grad = testing::random_tensor(Shape{100}, DType::float64, 10 + step);
      pg.grad = pc.grad.to(Device::cuda);
      cpu->step(std::span<const Parameter>(&pc, 1));
      gpu->step(std::span<const Parameter>(&pg, 1));
    }
    CHECK(max_difference(pc.value, pg.value) <= 1e-12);
    CHECK(max_difference(pc.grad, pg.grad) == 0);  // both consumed: zero
  }
}

TEST_CASE("nccl on one rank opens over the host communicator and reduces in place") {
  LocalCommunicator host;
  auto nccl = plugins().create_as<DeviceCommunicator>("device_communicator", "nccl", Params(), {},
                                                      Device::cuda);
  nccl->open(host);
  MESSAGE(nccl->describe());
  CHECK(nccl->size() == 1);
  const Tensor h = testing::random_tensor(Shape{1 << 20}, DType::float32, 5);
  Tensor d = h.to(Device::cuda);
  auto request = nccl->iallreduce_sum(d.raw(), h.numel(), DType::float32, "test");
  request->wait();
  CHECK(max_difference(h, d) == 0);  // to() copies on the compute stream, after the wait
  CHECK(request->test());
  nccl->broadcast(d.raw(), h.numel(), DType::float32, 0, "test");
  CHECK(max_difference(h, d) == 0);
}

namespace {

// A short Fashion-MNIST run of simplecnn; returns the test accuracy and checks the device memory
// of the steady state on the GPU.
double train(const std::string& device) {
  json c = default_experiment();
  c["device"] = device;
  c["training"]["tensor_format"] = "NCHW";  // the same weights layout (and initial weights)
  c["training"]["epochs"] = 1;
  c["dataset"]["train_limit"] = 10000;
  c["output"]["progress"] = "none";
  c["conv"] = {{"algorithm", "i2c"}};
  Experiment e(make_experiment(c, {}, "gpu-test"), plugins());
  const History h = e.run();
  return h.test->metrics.at("categorical_accuracy");
}

}  // namespace

TEST_CASE("the same short Fashion-MNIST training reaches the same accuracy on CPU and GPU") {
  const double cpu = train("cpu"), gpu = train("cuda");
  MESSAGE("test accuracy: cpu " << cpu << ", gpu " << gpu);
  CHECK(gpu >= 0.80);
  CHECK(std::abs(cpu - gpu) <= 0.005);
}

TEST_CASE("a checkpoint of a GPU run goes on on the CPU, and one of a CPU run on the GPU") {
  // Two epochs of simplecnn on a 2000-sample part of Fashion-MNIST: the first on one device,
  // checkpointed, the second resumed on the other; both orders must end where two epochs on the
  // CPU end, within the devices' rounding (accuracy within 1 point).
  auto run = [](const std::string& device, int epochs, const std::string& dir,
                const std::string& resume) {
    json c = default_experiment();
    c["device"] = device;
    c["training"]["tensor_format"] = "NCHW";
    c["training"]["epochs"] = epochs;
    c["training"]["resume"] = resume;
    c["dataset"]["train_limit"] = 2000;
    c["output"] = {{"progress", "none"}, {"checkpoint_dir", dir}};
    c["conv"] = {{"algorithm", "i2c"}};
    Experiment e(make_experiment(c, {}, "gpu-checkpoint"), plugins());
    return e.run().test->metrics.at("categorical_accuracy");
  };
  const auto dir = std::filesystem::temp_directory_path() / "dtnn-gpu-checkpoint";
  const double straight = run("cpu", 2, "", "");
  for (const auto& [first, second] : {std::pair{"cuda", "cpu"}, std::pair{"cpu", "cuda"}}) {
    CAPTURE(first);
    std::filesystem::remove_all(dir);
    run(first, 1, dir.string(), "");
    const double resumed = run(second, 2, "", dir.string());
    MESSAGE(first << " then " << second << ": " << resumed << " (cpu throughout: " << straight
                  << ")");
    CHECK(std::abs(resumed - straight) <= 0.01);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("no device memory is allocated or kept across steady-state training steps") {
  json c = default_experiment();
  c["device"] = "cuda";
  c["dataset"] = {{"name", "synthetic"},
                  {"train_samples", 640},
                  {"test_samples", 64},
                  {"input_shape", {28, 28, 1}},
                  {"classes", 10}};
  c["output"]["progress"] = "none";
  c["training"]["evaluate"] = false;
  Experiment e(make_experiment(c, {}, "gpu-memory"), plugins());
  Trainer& trainer = e.trainer();
  std::vector<std::int64_t> idx(64);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = std::int64_t(i);
  DeviceRuntime& runtime = device_runtime(Device::cuda);
  for (int s = 0; s < 3; ++s) trainer.train_step(idx);
  runtime.synchronize();
  const DeviceMemoryStats before = runtime.memory_stats();
  for (int s = 0; s < 20; ++s) trainer.train_step(idx);
  runtime.synchronize();
  const DeviceMemoryStats after = runtime.memory_stats();
  CHECK(after.driver_allocations == before.driver_allocations);
  CHECK(after.in_use == before.in_use);
  CHECK(after.reserved == before.reserved);
}

int main(int argc, char** argv) {
  initialize_runtime();
  const PluginRecord* gpu = plugins().find("device", "cuda", Device::cuda);
  if (!gpu) {  // this program is built only with the CUDA plugins: they must be found
    std::fprintf(stderr, "dtnn_gpu_tests: no device plugin 'cuda' in %s\n",
                 plugins().folders().empty() ? "no folder" : plugins().folders().front().c_str());
    return 1;
  }
  if (gpu->status != PluginRecord::Status::ok) {
    std::printf("dtnn_gpu_tests: skipped: %s\n", gpu->reason.c_str());
    return 77;
  }
  auto runtime = plugins().create_as<DeviceRuntime>("device", "cuda", Params(), {}, Device::cuda);
  runtime->open(0, Params());
  install_device_runtime(runtime);
  std::printf("%s\n", runtime->describe().c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
