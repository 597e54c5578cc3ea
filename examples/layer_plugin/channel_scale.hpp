// channel_scale: a learnt affine map per channel, y = x * gamma[c] + beta[c] (batchnorm without the
// normalisation). Its CPU plugin (channel_scale.cpp) and CUDA twin (cuda_channel_scale.cu) share
// this header: the parameters, their initial values, and where channel c sits in a sample.
//   x, y: [N, per-sample shape] in the layout's memory order; gamma, beta: [C]
//   backward (from y = x gamma + beta): dx = dy gamma, dgamma += sum dy x, dbeta += sum dy
#pragma once
#include <cstdint>

#include "dtnn/error.hpp"
#include "dtnn/host_device.hpp"
#include "dtnn/layer.hpp"

namespace example {

inline constexpr const char* kParameters = R"({"gamma": 1.0, "beta": 0.0})";

// Where the channels lie: element i of a sample is channel (i / inner) % channels.
struct ChannelIndex {
  std::int64_t channels = 1, inner = 1;

  // NHWC images and flat inputs: the last axis (inner 1); NCHW images: the first (inner H*W).
  static ChannelIndex of(const dtnn::Shape& sample, dtnn::Layout layout) {
    if (sample.rank() == 3)
      return layout == dtnn::Layout::nchw ? ChannelIndex{sample[0], sample[1] * sample[2]}
                                          : ChannelIndex{sample[2], 1};
    return {sample[sample.rank() - 1], 1};
  }
  DTNN_HOST_DEVICE std::int64_t operator()(std::int64_t i) const { return (i / inner) % channels; }
};

}  // namespace example
