// Conformance of a ConvAlgorithm against `reference`: forward, backward-data and backward-filter
// over a geometry, every output guarded against overruns, backward_filter checked to accumulate;
// and, for each lower precision its traits list ("precisions"), the same sweep in that precision.
#pragma once
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/params.hpp"

namespace dtnn {
class Registry;
}

namespace dtnn::testing {

struct ConvCheck {
  std::string pass;  // "forward", "backward-data", "backward-filter"
  bool supported = true;
  double error = 0;   // relative error against reference
  std::string guard;  // "" or how the guard zones were damaged
};

// The geometry sweep of the conformance suite: kernel 1/3/5, stride 1/2, padding 0/1/2,
// non-square input, batch 1 and 3, dilation 1 (and 2 for 3x3), and edge cases of blocked and tiled
// algorithms (odd channel counts, partial tiles, padding of 3), for the given dtype and layout.
std::vector<ConvGeometry> conformance_geometries(DType dtype, Layout layout);

// Runs the three passes of `algorithm` and of reference on g with seeded random tensors.
std::vector<ConvCheck> check_conv_algorithm(const Registry& registry, const std::string& algorithm,
                                            const ConvGeometry& g, const Params& params);
std::vector<ConvCheck> check_conv_algorithm(const Registry& registry, const std::string& algorithm,
                                            const ConvGeometry& g);

// Tolerance for a relative error in dtype.
double conv_tolerance(DType dtype);

// A geometry of precision bf16 or fp16 is checked against reference in float64 on the same
// float32 operands, element by element, within the format's bound for a sum of `depth` products
// whose magnitudes sum to `magnitude` (the pass run on |operands|):
//   (2u + u^2 + (depth + 2) 2^-24) magnitude + depth 2^-24
// u = unit_roundoff(p): each operand rounded once (relative u, 2^-25 absolute below fp16's
// normals: the last term), float32 accumulation; ConvCheck::error is then the worst ratio to it.
double format_bound(Precision p, double depth, double magnitude);

}  // namespace dtnn::testing
