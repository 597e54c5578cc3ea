// Which of cuDNN's listed convolution algorithms a pass takes, for the cuDNN convolution twins
// (conv2d, depthwise_conv2d, conv2d_transpose): the first result (cuDNN lists them best first,
// timed by its search or ranked by its heuristics) that ran, fits the workspace limit and, for
// float32 without TF32, was listed with FMA math (the others may use TF32 tensor cores). The pass
// then runs with the math its result was listed with.
#pragma once
#include <cudnn.h>

#include <cstddef>

#include "context.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::cuda {

// False when no result is usable (the caller names the pass in its error).
template <class Perf, class Algo>
bool pick_conv_algorithm(const Perf* results, int count, const Options& o, DType dtype, Algo& algo,
                         cudnnMathType_t& math, std::size_t& memory) {
  const bool strict_float32 = dtype == DType::float32 && !o.tf32;
  for (int i = 0; i < count; ++i)
    if (results[i].status == CUDNN_STATUS_SUCCESS && results[i].memory <= o.workspace_limit &&
        (!strict_float32 || results[i].mathType == CUDNN_FMA_MATH)) {
      algo = results[i].algo;
      math = results[i].mathType;
      memory = results[i].memory;
      return true;
    }
  return false;
}

}  // namespace dtnn::cuda
