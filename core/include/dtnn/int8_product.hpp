// Int8Product: one layer's matrix product y = x W (+ b) in int8, for inference
// (docs/precision.md, "int8 inference"). Symmetric quantisation, no zero points:
//
//   weights, per output column j:  W[k, j] ~ weight_scale[j] * q[k, j],  q in [-127, 127],
//                                  weight_scale[j] = max_k |W[k, j]| / 127
//   the input, per tensor:         x ~ input_scale * (code - 128),  code in [1, 255],
//                                  input_scale = range / 127
//
// range is the largest |x| calibration saw (observe()); inputs beyond it saturate. The sums of
// code x q are exact in int32 (int8_gemm.hpp), and y = (sum - 128 sum_k q[k, j]) * input_scale *
// weight_scale[j] + b[j]. Without saturation each output is within
//   sum_k (|x_k| weight_scale[j] / 2 + input_scale / 2 * (|W[k, j]| + weight_scale[j] / 2))
// of the float product (plus float32's rounding of the result): quantization_bound() below.
//
// A layer that can run its product in int8 (conv2d, fc) owns one, binds it to its shape and to a
// function giving its float weights as W [k, n] (after folding what it fuses), and exposes it as
// Layer::int8_product(); once ready(), its forward in evaluation runs it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/int8_gemm.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Int8Product {
 public:
  using WeightSource = std::function<std::vector<float>()>;
  static constexpr std::uint8_t kZeroCode = 128;

  // The product's reduction length k and outputs n, and its float weights (build time). With
  // segments > 1 the reduction is that many runs of k / segments (a convolution's filter rows),
  // each read from a run of its own (int8_gemm.hpp's Int8Rows).
  void bind(std::int64_t k, std::int64_t n, WeightSource weights, std::int64_t segments = 1);
  std::int64_t k() const { return k_; }
  std::int64_t n() const { return n_; }
  std::int64_t segments() const { return segments_; }
  // Bytes of a run as the kernels read it: k / segments rounded up to 4.
  std::int64_t segment_bytes() const;
  // Bytes of a coded input row with its runs one after the other (rows()).
  std::int64_t padded_k() const { return segments_ * segment_bytes(); }

  // Calibration: while observing, the layer hands each input to observe(); range() is the largest
  // |x| seen (NaN and infinities are refused: an Error naming the label, e.g. "layer 3 (conv2d)").
  void set_observing(bool on, std::string label = "") {
    observing_ = on;
    label_ = std::move(label);
  }
  bool observing() const { return observing_; }
  void observe(const float* x, std::int64_t count);
  float range() const { return range_; }

  // Freezes the int8 weights from the float ones the source gives now, and the input scale from
  // input_range (> 0; a range of 0, an input calibration saw only as zeros, takes 1).
  void quantize(float input_range);
  // The same from a model file: values [k, n], weight_scales [n], input_scale; throws Error (and
  // changes nothing) when the sizes are not the bound ones or a scale is not finite and > 0.
  void load(std::vector<std::int8_t> values, std::vector<float> weight_scales, float input_scale);
  bool ready() const { return !packed_.empty(); }

  const std::vector<std::int8_t>& values() const { return values_; }
  const std::vector<float>& weight_scales() const { return weight_scales_; }
  float input_scale() const { return input_scale_; }

  // codes[i] = clamp(nearbyint(x[i] / input_scale), -127, 127) + 128.
  void encode(const float* x, std::int64_t count, std::uint8_t* codes) const;
  // Coded input rows of lda >= padded_k() bytes, their runs one after the other.
  Int8Rows rows(const std::uint8_t* codes, std::int64_t lda) const;
  // y [count, n] (row stride ldy) from `count` coded input rows, with the bias (n values, or null)
  // and a relu; on the calling thread.
  void run(std::int64_t count, const Int8Rows& rows, const float* bias, bool relu, float* y,
           std::int64_t ldy) const;

 private:
  void prepare();  // packed_, offset_ and scale_ from values_ and the scales

  std::int64_t k_ = 0, n_ = 0, segments_ = 1;
  WeightSource weights_;
  bool observing_ = false;
  std::string label_;  // what calibration's errors name
  float range_ = 0;
  std::vector<std::int8_t> values_;
  std::vector<float> weight_scales_;
  float input_scale_ = 0;
  std::vector<std::int8_t> packed_;   // int8_gemm's layout, each run padded to segment_bytes()
  std::vector<std::int32_t> offset_;  // -128 times each column's sum of q
  std::vector<float> scale_;          // input_scale * weight_scale[j]
};

// The bound above for output j of x W (x: k values), for tests and the docs.
DTNN_CORE_EXPORT double quantization_bound(const float* x, const float* w, std::int64_t k,
                                           std::int64_t n, std::int64_t j, double input_scale,
                                           double weight_scale);

}  // namespace dtnn
