// direct: convolution computed straight from the tensors, without any GEMM or column matrix
// (PyDTNN's ConvDirect). Two engines, chosen per layer (parameter engine, "auto" by default):
//   channel_blocked.hpp  NHWC: vectors along channels, blocked over channels and output pixels;
//                        any stride, padding and dilation; no workspace beyond a zero row and row
//                        pointers.
//   planar.hpp           NCHW, and NHWC layers of few channels (kPlanarMaxIn, kPlanarMaxOut),
//                        transposed into its tiles: vectors along image rows over zero-padded
//                        per-sample tiles; stride 1, no dilation.
// NHWC backward-data of a stride-1, undilated layer is itself a forward convolution: of dy, with
// the filter turned by 180 degrees and its C and K swapped, padded by KH-1-pad (likewise in x).
// It runs on a second channel-blocked engine for that geometry, whose outer-product kernel
// vectorises along C; the gathering inner-product kernel, along K, is left to strided layers and
// few input channels. Measured (2 threads, ms): ResNet-20 16->16@32 2.2 against 4.2, VGG 64->64@32
// 22.9 against 33.6, ResNet-50 256->64@56 1x1 22.2 against 50.4.
// bf16 products (training.precision "bf16", bf16_forward.hpp): the channel-blocked forward, and so
// the turned backward-data, with `vdpbf16ps` where the CPU has AVX512-BF16 and the output channels
// are whole vectors of 16; everything else in float32 (more exact).
// The avx512 build carries the engines at two vector widths (width.hpp) and takes the 64-byte ones
// where dtnn/vector_width.hpp says the CPU runs 512-bit multiply-adds at full rate (3->64@32 f+b
// 6.5 against 4.4 ms, ResNet-20's 16->16@32 9.9 against 7.8 on AMD Zen 5 model 2, 1 thread).
#include "direct_algorithm.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/vector_width.hpp"

namespace {

dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
#if defined(__AVX512F__)
  if (dtnn::avx512_vector_width().bytes == 64) return dtnn::direct::create_wide(p);
#endif
  return new dtnn::direct::Direct(p);
}

}  // namespace

// Conformance (dtnn/testing/plugin_conformance.hpp) at each engine.
DTNN_EXPORT_PLUGIN(
        .kind = "conv", .name = "direct",
        .description =
            "direct convolution without a column matrix: NHWC blocked over channels and output "
            "pixels (any geometry, no workspace); NCHW and few-channel NHWC on planar tiles "
            "(stride "
            "1, no dilation)",
        .parameters = R"({"engine": "auto"})",
        .traits =
            R"({"precisions": ["bf16"],
                "conformance": [{"params": {"engine": "auto"}}, {"params": {"engine": "blocked"}},
                                  {"params": {"engine": "planar"}}]})",
        .factory = create)
