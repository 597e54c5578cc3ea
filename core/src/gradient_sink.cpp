#include "dtnn/gradient_sink.hpp"

#include <algorithm>
#include <limits>

#include "dtnn/gradient_exchange.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/trace.hpp"

namespace dtnn {

namespace {

class UpdateWhenReady final : public GradientSink {
 public:
  UpdateWhenReady(Optimizer& optimizer, std::span<const Parameter> parameters, bool check)
      : optimizer_(optimizer), parameters_(parameters), check_(check) {}

  void begin(double, bool loss_finite) override {
    found_ = false;
    if (loss_finite) optimizer_.begin_step();
  }
  void gradients_ready(std::size_t first, std::size_t count) override {
    const trace::Span span(trace::Phase::optimizer);
    for (std::size_t i = first; i < first + count && check_ && !found_; ++i)
      found_ = !all_finite(parameters_[i].grad);
    for (std::size_t i = first; i < first + count; ++i) {
      if (found_)
        Tensor(parameters_[i].grad).fill_zero();  // a handle on the same storage
      else
        optimizer_.update(i, parameters_[i]);
    }
  }
  bool finish() override { return !found_; }

 private:
  Optimizer& optimizer_;
  std::span<const Parameter> parameters_;
  bool check_, found_ = false;
};

class UpdateAfterBackward final : public GradientSink {
 public:
  UpdateAfterBackward(Optimizer& optimizer, std::span<const Parameter> parameters)
      : optimizer_(optimizer), parameters_(parameters) {}

  // weight: what the gradients are multiplied by before the update (loss scaling's 1 / scale).
  void begin(double weight, bool loss_finite) override {
    weight_ = weight;
    loss_finite_ = loss_finite;
  }
  void gradients_ready(std::size_t, std::size_t) override {}
  bool finish() override {
    if (!loss_finite_) return false;  // backward did not run: the gradients are still zero
    const bool finite = std::all_of(parameters_.begin(), parameters_.end(),
                                    [](const Parameter& p) { return all_finite(p.grad); });
    if (!finite) {
      for (const Parameter& p : parameters_) Tensor(p.grad).fill_zero();
      return false;
    }
    const trace::Span span(trace::Phase::optimizer);
    if (weight_ != 1.0)
      for (const Parameter& p : parameters_) scale_host(p.grad, weight_);
    optimizer_.begin_step();
    for (std::size_t i = 0; i < parameters_.size(); ++i) optimizer_.update(i, parameters_[i]);
    return true;
  }

 private:
  static void scale_host(const Tensor& t, double factor) {
    dispatch_dtype(t.dtype(), [&](auto z) {
      using T = decltype(z);
      T* __restrict v = Tensor(t).data<T>();  // a handle on the same storage
      const auto f = static_cast<T>(factor);
      const std::int64_t n = t.numel();
      for (std::int64_t i = 0; i < n; ++i) v[i] *= f;
    });
  }

  Optimizer& optimizer_;
  std::span<const Parameter> parameters_;
  double weight_ = 1.0;
  bool loss_finite_ = true;
};

class ExchangeThenUpdate final : public GradientSink {
 public:
  ExchangeThenUpdate(GradientExchange& exchange, Optimizer& optimizer, NonFinitePolicy policy,
                     bool host_memory)
      : exchange_(exchange), optimizer_(optimizer), policy_(policy), host_memory_(host_memory) {}

  // A rank whose loss is not finite sends NaN gradients: every rank's sums are then NaN and every
  // rank decides alike in finish(). On a device, where sums are not checked, it sends nothing
  // (weight 0) and the trainer's step status stops or skips every rank after the step.
  void begin(double weight, bool loss_finite) override {
    exchange_.begin(loss_finite    ? weight
                    : host_memory_ ? std::numeric_limits<double>::quiet_NaN()
                                   : 0.0);
  }
  void gradients_ready(std::size_t first, std::size_t count) override {
    exchange_.gradients_ready(first, count);
  }
  void contribute_nothing() override { exchange_.contribute_nothing(); }
  bool finish() override { return exchange_.finish(optimizer_, policy_); }

 private:
  GradientExchange& exchange_;
  Optimizer& optimizer_;
  NonFinitePolicy policy_;
  bool host_memory_;
};

}  // namespace

std::unique_ptr<GradientSink> local_gradient_sink(Optimizer& optimizer,
                                                  std::span<const Parameter> parameters,
                                                  NonFinitePolicy policy) {
  if (policy == NonFinitePolicy::skip_batch)
    return std::make_unique<UpdateAfterBackward>(optimizer, parameters);
  return std::make_unique<UpdateWhenReady>(optimizer, parameters, policy == NonFinitePolicy::stop);
}

std::unique_ptr<GradientSink> exchange_gradient_sink(GradientExchange& exchange,
                                                     Optimizer& optimizer, NonFinitePolicy policy,
                                                     bool host_memory) {
  return std::make_unique<ExchangeThenUpdate>(exchange, optimizer, policy, host_memory);
}

}  // namespace dtnn
