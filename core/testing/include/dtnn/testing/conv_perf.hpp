// The perf mode of the conformance harness, in ggml's manner: the same plugin and geometry the
// checks use, timed pass by pass. conv_bench prints it over real layer shapes (conv_shapes.hpp),
// `dtnn check-plugin --perf FILE` for one plugin.
#pragma once
#include <cstddef>
#include <string>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/params.hpp"

namespace dtnn {
class Registry;
}

namespace dtnn::testing {

struct ConvTiming {
  bool supported = true;
  std::string why_not;  // when not supported: the algorithm's reason
  double forward_s = 0, backward_data_s = 0, backward_filter_s = 0;  // medians
  std::size_t workspace_bytes = 0;
  // forward + backward-filter (+ backward-data for a layer whose input needs a gradient).
  double step_s(bool needs_dx) const {
    return forward_s + backward_filter_s + (needs_dx ? backward_data_s : 0.0);
  }
};

// How backward-filter finds the workspace: as forward left it ("per_layer": i2c reuses its
// columns) or claimed by another layer in between ("shared", a model's default).
enum class WorkspacePolicy { per_layer, shared };

// Each pass of algorithm on g: 2 warm-up calls, then repeats until min_time seconds have passed
// (at least 5), the median; backward-filter is timed right after a forward each time.
ConvTiming time_conv_algorithm(const Registry& registry, const std::string& algorithm,
                               const Params& params, const ConvGeometry& g, double min_time,
                               WorkspacePolicy policy = WorkspacePolicy::per_layer);

// 2 N Ho Wo K C KH KW: a direct convolution's arithmetic per pass (bias excluded), what GFLOP/s
// figures are counted against whatever an algorithm really does (the PyTorch peer's convention).
double conv_flops(const ConvGeometry& g);

}  // namespace dtnn::testing
