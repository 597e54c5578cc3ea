// The device executor of update rules (dtnn/apply_rule.hpp): a thread per element, on the
// context's compute stream. An optimizer's twin is one .cu file beside it that instantiates the
// optimizer with DeviceRules.
#pragma once
#include <cstdint>

#include "context.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

template <class Rule, class T, class... State>
__global__ void rule_kernel(Rule rule, std::size_t n, T* w, T* g, State*... state) {
  DTNN_GRID_STRIDE(i, n) rule.apply(w[i], g[i], state[i]...);
}

struct DeviceRules {
  template <class Rule, class T, class... State>
  static void run(const Rule& rule, std::int64_t n, T* w, T* g, State*... state) {
    if (n <= 0) return;
    const auto count = static_cast<std::size_t>(n);
    rule_kernel<<<blocks(count), kThreads, 0, Context::get().stream()>>>(rule, count, w, g,
                                                                         state...);
    check_launch();
  }
};

}  // namespace dtnn::cuda
