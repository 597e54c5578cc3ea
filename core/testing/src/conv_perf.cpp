#include "dtnn/testing/conv_perf.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "dtnn/registry.hpp"
#include "dtnn/workspace.hpp"

namespace dtnn::testing {

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double median_seconds(F&& f, double min_time) {
  f();
  f();
  std::vector<double> t;
  const auto start = Clock::now();
  while (t.size() < 5 || std::chrono::duration<double>(Clock::now() - start).count() < min_time) {
    const auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Deterministic values in [-0.5, 0.5): timings do not depend on the data, but denormals would.
void fill(Tensor& t) {
  dispatch_dtype(t.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i)
      p[i] = static_cast<T>((i * 7919 % 1000) / 1000.0 - 0.5);
  });
}

}  // namespace

double conv_flops(const ConvGeometry& g) {
  return 2.0 * double(g.n) * double(g.ho()) * double(g.wo()) * double(g.k) * double(g.c) *
         double(g.kh) * double(g.kw);
}

ConvTiming time_conv_algorithm(const Registry& registry, const std::string& algorithm,
                               const Params& params, const ConvGeometry& g, double min_time,
                               WorkspacePolicy policy) {
  ConvTiming out;
  auto algo = registry.create_as<ConvAlgorithm>("conv", algorithm, params);
  for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
    if (!algo->supports(g, pass, out.why_not)) {
      out.supported = false;
      return out;
    }
  Tensor x = Tensor::empty(g.x_shape(g.n), g.dtype, g.layout);
  Tensor w = Tensor::empty(g.w_shape(), g.dtype, g.layout);
  Tensor y = Tensor::empty(g.y_shape(g.n), g.dtype, g.layout);
  Tensor dx = Tensor::empty(x.shape(), g.dtype, g.layout);
  Tensor dw = Tensor::zeros(w.shape(), g.dtype, g.layout);
  fill(x), fill(w), fill(y);
  Workspace workspace;
  algo->set_workspace(&workspace);
  algo->prepare(g);
  out.workspace_bytes = algo->workspace_bytes();
  const int other_layer = 0;  // who claims the workspace between the passes (shared)
  out.forward_s = median_seconds([&] { algo->forward(x, w, y); }, min_time);
  out.backward_data_s = median_seconds([&] { algo->backward_data(y, w, dx); }, min_time);
  std::vector<double> filter;
  median_seconds(
      [&] {
        algo->forward(x, w, y);
        if (policy == WorkspacePolicy::shared) workspace.claim(&other_layer);
        const auto b = Clock::now();
        algo->backward_filter(x, y, dw);
        filter.push_back(std::chrono::duration<double>(Clock::now() - b).count());
      },
      min_time);
  std::sort(filter.begin(), filter.end());
  out.backward_filter_s = filter[filter.size() / 2];
  return out;
}

}  // namespace dtnn::testing
