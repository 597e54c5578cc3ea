// Update rules: how an optimizer plugin says what one step does to one weight, so that one
// definition runs on the host (here) and in its CUDA twin's kernel (plugins/cuda/common/
// apply_rule.cuh), as a metric's row rule does (dtnn/row_rule.hpp).
//
// A rule is a small copyable struct, written in the optimizer's own folder, with
//
//   // Updates one weight w from its gradient g, consumed (g = 0 afterwards), and its state.
//   DTNN_HOST_DEVICE void apply(T& w, T& g, T& state...) const;
//
// An optimizer written against an executor (a template parameter with the static `run` below)
// picks its rule once for both devices: the CPU plugin instantiates it with HostRules, the twin
// with cuda::DeviceRules.
#pragma once
#include <cstdint>

#include "dtnn/host_device.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn {

namespace detail {
// One chunk; restrict lets the compiler vectorise the loop.
template <class Rule, class T, class... State>
void apply_rule_range(const Rule& rule, std::int64_t begin, std::int64_t end, T* __restrict w,
                      T* __restrict g, State* __restrict... state) {
  for (std::int64_t i = begin; i < end; ++i) rule.apply(w[i], g[i], state[i]...);
}
}  // namespace detail

// rule.apply(w[i], g[i], state[i]...) for i in [0, n), in parallel chunks.
template <class Rule, class T, class... State>
void apply_rule(const Rule& rule, std::int64_t n, T* w, T* g, State*... state) {
  parallel_chunks(n, kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
    detail::apply_rule_range(rule, begin, end, w, g, state...);
  });
}

// The host executor of an optimizer written for both devices.
struct HostRules {
  template <class Rule, class T, class... State>
  static void run(const Rule& rule, std::int64_t n, T* w, T* g, State*... state) {
    apply_rule(rule, n, w, g, state...);
  }
};

}  // namespace dtnn
