// conv2d's int8 forward (dtnn/int8_product.hpp). Each sample's input is coded to 8 bits in (row,
// column, channel) order inside a border of zero codes (128) as wide as the padding; the product's
// reduction runs one filter row at a time (its `segments`: kernel height runs of kw * c bytes). So
// the GEMM reads each output pixel's window straight out of the coded image: run ky of output
// pixel (oy, ox) starts at image row oy * stride + ky * dilation, column ox * stride, and the
// pixels of an output row are `stride * c` bytes apart (int8_gemm.hpp's Int8Rows). With a
// horizontal dilation the window's columns are not one run: the windows are then copied out first
// (im2col). The bias and the fused relu are the GEMM's epilogue. NHWC outputs are written in
// place; NCHW ones go through a buffer of the thread's and are transposed. Samples are shared
// among the threads; groups must be 1.
#pragma once
#include <cstdint>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::int8_conv2d {

// The filter w, in g.layout's order, as the product's W [(ky, kx, c), k].
std::vector<float> weight_matrix(const ConvGeometry& g, const float* w);

class Runner {
 public:
  // y = relu?(conv(x, the product's filter) + bias) on the batch x holds; bias: g.k values or null.
  void forward(const ConvGeometry& g, const Int8Product& product, const Tensor& x,
               const float* bias, bool relu, Tensor& y);

 private:
  struct Scratch {
    std::vector<std::uint8_t> image;      // the coded sample inside its border
    std::vector<std::uint8_t> rows;       // dilated windows: one row per output pixel
    std::vector<float> out;               // NCHW: the sample's output as [pixel, k]
    std::vector<std::uint8_t> row_codes;  // NCHW: one channel's row, coded
  };
  std::vector<Scratch> threads_;  // one per thread, sized on first use
};

}  // namespace dtnn::int8_conv2d
