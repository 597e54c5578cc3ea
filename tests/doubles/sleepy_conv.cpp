// Test double for best_of: the reference convolution, slowed down by DTNN_SLEEP_MS per forward pass
// plus the milliseconds in the environment variable DTNN_TEST_EXTRA_MS_<name>, if set: asleep, or
// with DTNN_SLEEPY_SPIN spinning (time that costs CPU, hence energy).
#include <chrono>
#include <cstdlib>
#include <thread>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"

namespace {
using namespace dtnn;

class Sleepy final : public ConvAlgorithm {
 public:
  explicit Sleepy(const PluginContext& ctx)
      : inner_(ctx.registry->create_as<ConvAlgorithm>("conv", "reference", Params())) {
    if (const char* extra = std::getenv("DTNN_TEST_EXTRA_MS_" DTNN_SLEEPY_NAME))
      delay_ms_ += std::atoi(extra);
  }
  std::string name() const override { return DTNN_SLEEPY_NAME; }
  bool supports(const ConvGeometry& g, ConvPass p, std::string& why) const override {
    return inner_->supports(g, p, why);
  }
  void prepare(const ConvGeometry& g) override { inner_->prepare(g); }
  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
#ifdef DTNN_SLEEPY_SPIN
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay_ms_);
    while (std::chrono::steady_clock::now() < until) {
    }
#else
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
#endif
    inner_->forward(x, w, y);
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    inner_->backward_data(dy, w, dx);
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    inner_->backward_filter(x, dy, dw);
  }

 private:
  std::shared_ptr<ConvAlgorithm> inner_;
  int delay_ms_ = DTNN_SLEEP_MS;
};
Plugin* create(const Params&, const PluginContext& ctx) { return new Sleepy(ctx); }
}  // namespace

DTNN_PLUGIN("conv", DTNN_SLEEPY_NAME, "test double: reference, slowed down", R"({})", create)
