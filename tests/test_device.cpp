// The device layer of the core and what of the CUDA plugins runs without a GPU: the caching
// allocator's logic, tensors on a device through an installed runtime (a host-memory double),
// device plugin selection and its errors. The GPU itself is tested by dtnn_gpu_tests.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "caching_allocator.hpp"
#include "dtnn/block_layer.hpp"
#include "dtnn/config.hpp"
#include "dtnn/device.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/model.hpp"
#include "dtnn/testing/device_twin.hpp"
#include "host_backed_runtime.hpp"
#include "test_support.hpp"

using namespace dtnn;
using dtnn::cuda::CachingAllocator;
using dtnn::test::InstalledDouble;

namespace {

// A driver that hands out host memory and counts, with a capacity to run out of.
struct FakeDriver {
  std::size_t capacity = std::size_t{1} << 30, used = 0;
  int allocations = 0, frees = 0;
  std::map<void*, std::size_t> live;
  CachingAllocator make() {
    return CachingAllocator(
        [this](std::size_t bytes) -> void* {
          if (used + bytes > capacity) return nullptr;
          void* p = std::malloc(bytes);
          live[p] = bytes;
          used += bytes;
          ++allocations;
          return p;
        },
        [this](void* p) {
          used -= live.at(p);
          live.erase(p);
          ++frees;
          std::free(p);
        });
  }
};

}  // namespace

TEST_CASE("the caching allocator serves a released block again without the driver") {
  FakeDriver driver;
  {
    CachingAllocator a = driver.make();
    void* p = a.allocate(1000);
    a.release(p);
    void* q = a.allocate(900);  // the same 1024-byte class
    CHECK(q == p);
    CHECK(driver.allocations == 1);
    CHECK(a.stats().driver_allocations == 1);
    CHECK(a.stats().in_use == 1024);
    CHECK(a.stats().reserved == 1024);
    a.release(q);
    // A steady state: the same requests over and over ask the driver for nothing more.
    for (int step = 0; step < 5; ++step) {
      std::vector<void*> blocks;
      for (std::size_t bytes : {std::size_t{4} << 20, std::size_t{100}, std::size_t{3} << 20})
        blocks.push_back(a.allocate(bytes));
      for (void* b : blocks) a.release(b);
    }
    // 4 MiB and 3 MiB (a 4 MiB class) are new; 100 bytes (512) takes the cached 1024-byte block.
    CHECK(driver.allocations == 3);
    CHECK(a.stats().in_use == 0);
    CHECK(a.stats().peak_in_use == (std::size_t{8} << 20) + 1024);
  }
  CHECK(driver.frees == 3);  // the destructor returns the cache
  CHECK(driver.used == 0);
}

TEST_CASE("the caching allocator rounds to size classes and never wastes a block twice too big") {
  CHECK(CachingAllocator::size_class(1) == 512);
  CHECK(CachingAllocator::size_class(513) == 1024);
  CHECK(CachingAllocator::size_class((1 << 20) - 1) == (1 << 20));
  CHECK(CachingAllocator::size_class((1 << 20) + 1) == (std::size_t{2} << 20));
  FakeDriver driver;
  CachingAllocator a = driver.make();
  void* big = a.allocate(std::size_t{64} << 20);
  a.release(big);
  void* small = a.allocate(std::size_t{1} << 20);  // 64 MiB is over twice 1 MiB: not reused
  CHECK(small != big);
  CHECK(driver.allocations == 2);
  void* half = a.allocate(std::size_t{40} << 20);  // within twice: the cached 64 MiB block
  CHECK(half == big);
  a.release(half);
  a.release(small);
}

TEST_CASE("out of device memory, the allocator empties its cache and tries again, then says so") {
  FakeDriver driver;
  driver.capacity = std::size_t{10} << 20;
  CachingAllocator a = driver.make();
  void* p = a.allocate(std::size_t{6} << 20);
  a.release(p);                                // cached: 6 MiB of the 10 are held
  void* q = a.allocate(std::size_t{8} << 20);  // needs the cache given back first
  CHECK(q != nullptr);
  CHECK(a.stats().reserved == (std::size_t{8} << 20));
  CHECK(test::error_of([&] {
          a.allocate(std::size_t{4} << 20);
        }).find("GPU out of memory allocating 4194304 bytes") != std::string::npos);
  a.release(q);
  CHECK(test::error_of([&] { a.release(&driver); }).find("did not hand out") != std::string::npos);
}

TEST_CASE("a tensor on a device takes memory, copies and zeroing from the installed runtime") {
  CHECK(test::error_of([] {
          Tensor::empty(Shape{4}, DType::float32, Layout::nchw, Device::cuda);
        }).find("no runtime for device 'cuda'") != std::string::npos);
  InstalledDouble d;
  Tensor host = Tensor::empty(Shape{2, 3}, DType::float64);
  for (int i = 0; i < 6; ++i) host.data<double>()[i] = i + 0.5;
  Tensor dev = host.to(Device::cuda);
  CHECK(dev.device() == Device::cuda);
  CHECK(dev.shape() == host.shape());
  CHECK(d.runtime->allocations == 1);
  CHECK(d.runtime->copies == 1);
  Tensor back = dev.to(Device::cpu);
  CHECK(d.runtime->copies == 2);
  CHECK(back.data<double>()[5] == 5.5);
  CHECK(back.raw() != dev.raw());
  CHECK(dev.to(Device::cuda).raw() == dev.raw());  // already there: no copy
  Tensor z = Tensor::zeros(Shape{3}, DType::float32, Layout::nchw, Device::cuda);
  CHECK(d.runtime->zeroings == 1);
  CHECK(z.to(Device::cpu).data<float>()[2] == 0.0f);
  // A view of device memory stays on the device.
  CHECK(dev.slice_batch(1, 2).device() == Device::cuda);
  // Host code writes a tensor's new values into its host staging, then copies them in.
  CHECK(host.host_staging().raw() == host.raw());  // on the cpu: the tensor itself
  Tensor staging = dev.host_staging();
  CHECK(staging.device() == Device::cpu);
  CHECK(staging.shape() == dev.shape());
  staging.data<double>()[0] = 42.0;
  dev.copy_from(staging);
  CHECK(dev.to(Device::cpu).data<double>()[0] == 42.0);
}

TEST_CASE(
    "a twin is found by its descriptor's device, a model on cuda asks for its layers' twins") {
  // test_weights has a cpu plugin and a "cuda" twin of the same name (tests/doubles).
  const Registry twins({std::string(DTNN_TEST_DOUBLES) + "/device"});
  const PluginRecord* cpu = twins.find("layer", "test_weights");
  const PluginRecord* cuda = twins.find("layer", "test_weights", Device::cuda);
  REQUIRE(cpu != nullptr);
  REQUIRE(cuda != nullptr);
  CHECK(cpu->device == Device::cpu);
  CHECK(cuda->device == Device::cuda);
  CHECK(cpu->file != cuda->file);
  CHECK(twins.warnings().empty());  // the same name on two devices is no duplicate
  CHECK(twins.available("layer", Device::cuda) ==
        std::vector<std::string>{"test_weights", "test_weights_skewed", "test_weights_stale"});
  CHECK(parse_device("cuda") == Device::cuda);
  CHECK(test::error_of([] { parse_device("gpu"); }) ==
        "unknown device 'gpu' (expected \"cpu\" or \"cuda\")");
  InstalledDouble d;
  const nlohmann::json spec = {
      {"layers", {{{"type", "flatten"}}, {{"type", "fc"}, {"units", 3}}, {{"type", "softmax"}}}}};
  ModelOptions o;
  o.device = Device::cuda;
  o.layout = Layout::nchw;
  o.max_batch = 4;
  // Without a GPU the CUDA plugins are there but unavailable (with CUDA at build time), or absent.
  const std::string e = test::error_of([&] {
    Model(parse_model_spec(spec, "m.json"), o, Shape{1, 2, 2}, test::plugins());
  });
  CAPTURE(e);
  CHECK((e.find("layer plugin 'fc' on cuda is unavailable on this machine") != std::string::npos ||
         e.find("layer 'fc' has no cuda twin") != std::string::npos));
  // flatten has no cuda plugin and needs none: it only reshapes.
  const nlohmann::json only_flatten = {{"layers", {{{"type", "flatten"}}}}};
  Model m(parse_model_spec(only_flatten, "m.json"), o, Shape{1, 2, 2}, test::plugins());
  CHECK(m.output_shape() == Shape{4});
}

TEST_CASE("an experiment on cuda without a usable GPU stops with the reason") {
  nlohmann::json c = {
      {"model", "simplecnn"}, {"device", "cuda"}, {"dataset", {{"name", "synthetic"}}}};
  const std::string e =
      test::error_of([&] { Experiment(make_experiment(c, {}, "gpu.json"), test::plugins()); });
  CAPTURE(e);
  if (find_device_runtime(Device::cuda) == nullptr && !std::getenv("DTNN_TEST_HAS_GPU"))
    CHECK((e.find("device plugin 'cuda' is unavailable on this machine") != std::string::npos ||
           e.find("no device plugin named 'cuda'") != std::string::npos));
  nlohmann::json bad = c;
  bad["device"] = "gpu";
  CHECK(test::error_of([&] { make_experiment(bad, {}, "gpu.json"); }) ==
        "gpu.json: device: expected \"cpu\" or \"cuda\" (one NVIDIA GPU per process), got \"gpu\"");
}

TEST_CASE("every CUDA plugin loads without a GPU and reports itself unavailable with the reason") {
  int cuda_plugins = 0;
  for (const PluginRecord& r : test::plugins().records()) {
    if (r.device != Device::cuda) continue;
    ++cuda_plugins;
    CAPTURE(r.file);
    CHECK(r.status != PluginRecord::Status::rejected);
    CHECK(r.status != PluginRecord::Status::load_failed);
    if (r.status == PluginRecord::Status::unavailable)
      CHECK(r.reason.find("CUDA") != std::string::npos);
  }
#if DTNN_HAVE_CUDA
  CHECK(cuda_plugins >= 15);
#else
  CHECK(cuda_plugins == 0);
#endif
  // A plugin nobody has is no unavailable twin's business: the error lists none of them.
  const std::string missing =
      test::error_of([] { test::plugins().require("layer", "no_such_layer", "here"); });
  CHECK(missing.find("no layer plugin named 'no_such_layer'") != std::string::npos);
  CHECK(missing.find("layer_cuda_") == std::string::npos);
}

namespace {

// The layer types named in a layer's parameters (a block's paths).
void collect_layer_types(const nlohmann::json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    if (j.contains("type") && j["type"].is_string()) out.insert(j["type"].get<std::string>());
    for (const auto& [key, value] : j.items()) collect_layer_types(value, out);
  } else if (j.is_array()) {
    for (const nlohmann::json& value : j) collect_layer_types(value, out);
  }
}

}  // namespace

TEST_CASE("the zoo models docs/gpu.md calls GPU-ready have a cuda twin for every layer") {
#if DTNN_HAVE_CUDA
  for (const char* model :
       {"simplecnn", "simplemlp", "vgg16_imagenet", "resnet50_imagenet", "resnet20_cifar10",
        "densenet_cifar10", "mobilenetv2_tiny", "mobilenetv2", "transformer_lm", "bert_tiny",
        "vit_tiny", "transformer_seq2seq", "unet"}) {
    CAPTURE(model);
    std::set<std::string> types;
    for (const LayerSpec& layer : load_model_spec(resolve_model_path(model, "")).layers) {
      types.insert(layer.type);
      collect_layer_types(layer.params.json(), types);  // the layers of its paths
    }
    CHECK(types.size() > 3);
    for (const std::string& type : types) {
      CAPTURE(type);
      const PluginRecord* cpu = test::plugins().find("layer", type);
      REQUIRE(cpu != nullptr);
      // An alias (pointwise_conv2d) runs as the type it names; a reshape (flatten) needs no twin.
      const std::string runs_as = cpu->traits.alias ? cpu->traits.alias->type : type;
      if (test::plugins().find("layer", runs_as, Device::cuda)) continue;
      CHECK(cpu->traits.reshape);
    }
  }
#endif
}

TEST_CASE(
    "the device-twin conformance check passes a faithful twin and catches a skewed or stale one") {
  InstalledDouble d;
  const Registry registry({DTNN_TEST_DOUBLES "/device"});
  auto worst = [&](const std::string& type, const std::string& what) {
    double error = -1;
    for (const auto& c : dtnn::testing::check_device_twin(registry, Device::cuda, type, Params(),
                                                          Shape{2, 3, 3}, DType::float64))
      if (c.what == what) error = c.error;
    return error;
  };
  for (const char* what : {"parameters at build: weights", "forward (train)", "input gradient",
                           "gradient of weights", "forward (eval)"}) {
    CAPTURE(what);
    CHECK(worst("test_weights", what) == 0.0);  // the same arithmetic on both "devices"
  }
  CHECK(worst("test_weights_skewed", "forward (train)") == 0.0);
  CHECK(worst("test_weights_skewed", "input gradient") >
        dtnn::testing::twin_tolerance(DType::float64));
  CHECK(worst("test_weights_skewed", "gradient of weights") == 0.0);
  // A twin that caches its weights at build agrees until they change: the check changes them.
  CHECK(worst("test_weights_stale", "parameters at build: weights") == 0.0);
  CHECK(worst("test_weights_stale", "forward (train)") >
        dtnn::testing::twin_tolerance(DType::float64));
  CHECK(d.runtime->copies > 0);  // the twin's tensors went through the device runtime
}

namespace {

// A block whose paths' input gradients are summed by BlockLayer's host loop (it overrides no
// accumulate), built on a device.
class HostSumBlock final : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "host_sum"; }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override { return paths[0]; }
  void merge(const std::vector<const Tensor*>&, Tensor&) const override {}
  const Tensor& share(const Tensor& dy, std::size_t, Tensor&) const override { return dy; }
  bool shares_need_buffers() const override { return false; }
};

}  // namespace

TEST_CASE("a block on a device that sums its paths' gradients on the host says so, not crash") {
  InstalledDouble d;
  HostSumBlock block(Params(
      nlohmann::json{{"paths", {nlohmann::json::array(), nlohmann::json::array()}}}, "host_sum"));
  LayerBuildContext ctx;
  ctx.input_shape = Shape{4};
  ctx.dtype = DType::float32;
  ctx.layout = Layout::nchw;
  ctx.max_batch = 2;
  ctx.device = Device::cuda;
  const Registry registry(std::vector<std::filesystem::path>{});  // empty paths: no layers
  ctx.registry = &registry;
  block.build(ctx);
  const Tensor dy = Tensor::zeros(Shape{2, 4}, DType::float32, Layout::nchw, Device::cuda);
  Tensor dx = Tensor::empty(Shape{2, 4}, DType::float32, Layout::nchw, Device::cuda);
  CHECK(test::error_of([&] { block.backward(dy, dy, dy, &dx); }) ==
        "host_sum on cuda: the paths' input gradients are summed on the host unless the block "
        "overrides accumulate");
}
