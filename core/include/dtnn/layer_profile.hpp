// layer_profile: the one profiler of the layers, while enabled (Model::set_profiling, dtnn_bench
// --profile): the time of each layer object (a block's time includes its paths'; the model's table
// of its top-level layers, where a ResNet block is one row), and the time per kind of layer (type,
// input shape, weights, geometry) over every layer a model runs, the layers inside add/concat
// blocks included and the blocks themselves not: which kinds the time goes to. On a device the
// device is synchronised around each layer, so a layer's time is its kernels' time.
#pragma once
#include <chrono>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/trace.hpp"

namespace dtnn::layer_profile {

DTNN_CORE_EXPORT void enable(bool on, Device device);  // and forget what was recorded
DTNN_CORE_EXPORT bool enabled();
// Now, once the profiled device (if any) has finished the work issued so far.
DTNN_CORE_EXPORT std::chrono::steady_clock::time_point now();
DTNN_CORE_EXPORT void record(const Layer& layer, const Shape& input, bool forward, double seconds);

struct Tally {
  double forward = 0, backward = 0;  // seconds
  std::int64_t forward_calls = 0, backward_calls = 0;
};
// What layer took since profiling was enabled (its paths included, for a block).
DTNN_CORE_EXPORT Tally of(const Layer& layer);
// The kinds by total time, the largest `rows` of them: calls, ms per call forward and backward,
// share of the total.
DTNN_CORE_EXPORT std::string table(std::size_t rows = 30);
DTNN_CORE_EXPORT bool is_block(const Layer& layer);  // add, concat: timed through their paths

// The end of a timed call begun at t0: recorded here when enabled, and as a span of the trace
// (dtnn/layer_trace.hpp) when the trace records.
DTNN_CORE_EXPORT void finish(const Layer& layer, const Shape& input, bool forward,
                             std::chrono::steady_clock::time_point t0, double joules0);

// Runs f, the forward (or backward) of layer on an input of that shape, timing it when enabled
// or when the trace records.
template <class F>
void timed(const Layer& layer, const Shape& input, bool forward, F&& f) {
  if (!enabled() && !trace::recording()) return f();
  const auto t0 = now();
  const double joules0 = trace::recording() ? trace::joules_now() : 0;
  f();
  finish(layer, input, forward, t0, joules0);
}

}  // namespace dtnn::layer_profile
