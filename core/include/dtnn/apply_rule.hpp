// The CPU optimizer plugins' executor of dtnn/update_rules.hpp: a rule over every element of a
// parameter, in parallel chunks (the CUDA plugins run the same rules in a kernel).
#pragma once
#include <cstdint>

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

// rule.apply(w[i], g[i], state[i]...) for i in [0, n).
template <class Rule, class T, class... State>
void apply_rule(const Rule& rule, std::int64_t n, T* w, T* g, State*... state) {
  parallel_chunks(n, kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
    detail::apply_rule_range(rule, begin, end, w, g, state...);
  });
}

}  // namespace dtnn
