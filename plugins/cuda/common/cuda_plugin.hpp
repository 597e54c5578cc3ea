// What the CUDA plugins' sources share: the export macro (every CUDA plugin reports itself
// unavailable, with the reason, where no GPU can be used) and the NCHW view of per-sample shapes.
#pragma once
#include <cstdint>
#include <string>

#include "context.hpp"
#include "dtnn/error.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"

// A CPU plugin's twin on an NVIDIA GPU: the same kind and name, device "cuda", unavailable (with
// the reason) where no GPU can be used.
#define DTNN_CUDA_PLUGIN(Kind, Name, Description, ParametersJson, Factory)                     \
  DTNN_EXPORT_PLUGIN(.kind = Kind, .name = Name, .device = "cuda", .description = Description, \
                     .parameters = ParametersJson, .probe = ::dtnn::cuda::probe,               \
                     .factory = Factory)

// A CPU layer's twin on an NVIDIA GPU, with the cases the GPU tests check it on against the CPU
// layer (dtnn_gpu_tests, tests/gpu/test_gpu.cpp, through dtnn/testing/device_twin.hpp):
//   {"twin_checks": [{"params": {...}, "input_nchw": [C, H, W] or [features]}, ...], ...}
// in float64 and float32; "input_range": [lo, hi] for the inputs' values (default [-1, 1]);
// "tokens": N for whole ids in [0, N) (an embedding's); "lengths": [L, ...] for padded sequences
// (one per sample: the batch). Every
// layer twin declares at least one (tests/test_registry.cpp checks it on any machine).
#define DTNN_CUDA_LAYER(Name, Description, ParametersJson, TraitsJson, Factory)                   \
  DTNN_EXPORT_PLUGIN(.kind = "layer", .name = Name, .device = "cuda", .description = Description, \
                     .parameters = ParametersJson, .traits = TraitsJson,                          \
                     .probe = ::dtnn::cuda::probe, .factory = Factory)

namespace dtnn::cuda {

// A per-sample shape as cuDNN's (C, H, W): an image in NCHW, or features as (C, 1, 1).
struct Chw {
  std::int64_t c = 1, h = 1, w = 1;
  std::int64_t numel() const { return c * h * w; }
};

// The layer's input in NCHW terms; NHWC is refused by name (the CUDA layers keep dtnn's NCHW
// weight layouts, so that checkpoints move between CPU and GPU runs).
inline Chw chw_of(const LayerBuildContext& ctx, const std::string& layer) {
  const Shape& s = ctx.input_shape;
  if (s.rank() == 3 && ctx.layout != Layout::nchw)
    throw Error(layer +
                " on cuda needs NCHW tensors: set training.tensor_format to \"auto\" or "
                "\"NCHW\"");
  if (s.rank() == 3) return {s[0], s[1], s[2]};
  return {s.numel(), 1, 1};
}

}  // namespace dtnn::cuda
