// The parameters of conv2d_transpose, with their defaults (what its CPU plugin and its CUDA twin
// both declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/image_shape.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "initializers.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kConv2dTransposeParameters =
    R"({"filters": 0, "kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
        "output_padding": [0, 0], "use_bias": true, "algorithm": "", "algorithm_params": {},
        "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";

// conv2d_transpose: "filters", the window, "output_padding", "use_bias", the initialisers; and G,
// the convolution the layer transposes (its input has the layer's output shape).
struct Conv2dTranspose {
  std::int64_t filters;
  bool use_bias;
  Initializers init;
  ConvGeometry window;
  std::int64_t output_padding_h = 0, output_padding_w = 0;
  explicit Conv2dTranspose(const Params& p)
      : filters(p.get_int("filters")), use_bias(p.get_bool("use_bias")), init(p) {
    if (filters <= 0) p.fail("filters", "a positive number of filters");
    window.read_window(p);
    const auto [oph, opw] = p.get_pair("output_padding", 0);
    if (oph >= std::max(window.stride_h, window.dilation_h) ||
        opw >= std::max(window.stride_w, window.dilation_w))
      p.fail("output_padding",
             "less than the stride or the dilation (it picks one of the sizes "
             "a strided output may have had)");
    output_padding_h = oph, output_padding_w = opw;
  }
  // G for a per-sample input `in` (an image in `layout`), batches up to `batch`.
  ConvGeometry geometry(const Shape& in, Layout layout, DType dtype, std::int64_t batch) const {
    const ImageShape image = image_of(in, layout, "conv2d_transpose");
    const std::int64_t h_in = image.h, w_in = image.w;
    ConvGeometry g = window;
    g.layout = layout;
    g.dtype = dtype;
    g.n = batch;
    g.k = image.c;  // G's output channels: this layer's input channels
    g.c = filters;
    g.h = (h_in - 1) * g.stride_h - 2 * g.pad_h + g.dilation_h * (g.kh - 1) + 1 + output_padding_h;
    g.w = (w_in - 1) * g.stride_w - 2 * g.pad_w + g.dilation_w * (g.kw - 1) + 1 + output_padding_w;
    if (g.h < 1 || g.w < 1 || g.ho() != h_in || g.wo() != w_in)
      throw Error("conv2d_transpose: " + in.str() + " with " + g.window_str() +
                  " gives no output (the padding takes more than the kernel spreads)");
    return g;
  }
};

}  // namespace dtnn::layer_parameters
