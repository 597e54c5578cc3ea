// Int8Product (dtnn/int8_product.hpp): quantising the weights and the input, and running the
// int8 GEMM on them.
#include "dtnn/int8_product.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/int8_gemm.hpp"

namespace dtnn {

void Int8Product::bind(std::int64_t k, std::int64_t n, WeightSource weights,
                       std::int64_t segments) {
  if (segments < 1 || k % segments != 0)
    throw Error("int8: " + std::to_string(segments) + " runs do not divide the reduction of " +
                std::to_string(k));
  k_ = k, n_ = n, segments_ = segments;
  weights_ = std::move(weights);
}

std::int64_t Int8Product::segment_bytes() const { return int8_padded_k(k_ / segments_); }

void Int8Product::observe(const float* x, std::int64_t count) {
  float m = range_;
  bool finite = true;
  for (std::int64_t i = 0; i < count; ++i) {
    finite &= std::isfinite(x[i]);
    m = std::max(m, std::fabs(x[i]));
  }
  if (!finite)
    throw Error("int8 calibration: the input of " + (label_.empty() ? "a layer" : label_) +
                " holds NaN or infinity");
  range_ = m;
}

void Int8Product::quantize(float input_range) {
  if (!weights_) throw Error("int8: the product is not bound to a layer's weights");
  if (!(input_range >= 0) || !std::isfinite(input_range))
    throw Error("int8: the input range must be finite and >= 0, got " +
                std::to_string(input_range));
  const std::vector<float> w = weights_();
  if (static_cast<std::int64_t>(w.size()) != k_ * n_)
    throw Error("int8: the layer gave " + std::to_string(w.size()) + " weights, expected " +
                std::to_string(k_ * n_));
  std::vector<float> scales(static_cast<std::size_t>(n_), 0.0f);
  for (std::int64_t kk = 0; kk < k_; ++kk)
    for (std::int64_t j = 0; j < n_; ++j) {
      const float v = w[static_cast<std::size_t>(kk * n_ + j)];
      if (!std::isfinite(v)) throw Error("int8: the layer's weights hold NaN or infinity");
      scales[static_cast<std::size_t>(j)] =
          std::max(scales[static_cast<std::size_t>(j)], std::fabs(v));
    }
  for (float& s : scales) s = s > 0 ? s / 127.0f : 1.0f;  // an all-zero column: any scale
  std::vector<std::int8_t> q(w.size());
  for (std::int64_t kk = 0; kk < k_; ++kk)
    for (std::int64_t j = 0; j < n_; ++j) {
      const auto i = static_cast<std::size_t>(kk * n_ + j);
      const float v = std::nearbyint(w[i] / scales[static_cast<std::size_t>(j)]);
      q[i] = static_cast<std::int8_t>(std::clamp(v, -127.0f, 127.0f));
    }
  values_ = std::move(q);
  weight_scales_ = std::move(scales);
  input_scale_ = input_range > 0 ? input_range / 127.0f : 1.0f;
  prepare();
}

void Int8Product::load(std::vector<std::int8_t> values, std::vector<float> weight_scales,
                       float input_scale) {
  if (static_cast<std::int64_t>(values.size()) != k_ * n_ ||
      static_cast<std::int64_t>(weight_scales.size()) != n_)
    throw Error("int8 weights of " + std::to_string(values.size()) + " values and " +
                std::to_string(weight_scales.size()) + " scales; the layer's product is " +
                std::to_string(k_) + " x " + std::to_string(n_));
  auto good = [](float s) { return std::isfinite(s) && s > 0; };
  if (!good(input_scale) || !std::all_of(weight_scales.begin(), weight_scales.end(), good))
    throw Error("int8 scales must be finite and > 0");
  if (std::find(values.begin(), values.end(), std::int8_t(-128)) != values.end())
    throw Error("int8 weights must lie in [-127, 127]; found -128");
  values_ = std::move(values);
  weight_scales_ = std::move(weight_scales);
  input_scale_ = input_scale;
  prepare();
}

void Int8Product::prepare() {
  // Each run of the reduction padded with zero rows to segment_bytes().
  const std::int64_t length = k_ / segments_, padded = segment_bytes();
  std::vector<std::int8_t> rows(static_cast<std::size_t>(segments_ * padded * n_), 0);
  for (std::int64_t kk = 0; kk < k_; ++kk)
    std::copy_n(values_.begin() + kk * n_, n_,
                rows.begin() + ((kk / length) * padded + kk % length) * n_);
  packed_ = pack_int8_b(rows.data(), segments_ * padded, n_);
  offset_.assign(static_cast<std::size_t>(n_), 0);
  scale_.resize(static_cast<std::size_t>(n_));
  for (std::int64_t kk = 0; kk < k_; ++kk)
    for (std::int64_t j = 0; j < n_; ++j)
      offset_[static_cast<std::size_t>(j)] -=
          kZeroCode * values_[static_cast<std::size_t>(kk * n_ + j)];
  for (std::int64_t j = 0; j < n_; ++j)
    scale_[static_cast<std::size_t>(j)] =
        input_scale_ * weight_scales_[static_cast<std::size_t>(j)];
}

void Int8Product::encode(const float* x, std::int64_t count, std::uint8_t* codes) const {
  const float inverse = 1.0f / input_scale_;
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = std::clamp(x[i] * inverse, -127.0f, 127.0f);
    codes[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(std::nearbyint(v)) + kZeroCode);
  }
}

Int8Rows Int8Product::rows(const std::uint8_t* codes, std::int64_t lda) const {
  return {codes, lda, segments_, segment_bytes() / 4, segment_bytes()};
}

void Int8Product::run(std::int64_t count, const Int8Rows& rows, const float* bias, bool relu,
                      float* y, std::int64_t ldy) const {
  const Int8Epilogue e{offset_.data(), scale_.data(), bias, relu};
  int8_gemm(count, n_, rows, packed_.data(), e, y, ldy);
}

double quantization_bound(const float* x, const float* w, std::int64_t k, std::int64_t n,
                          std::int64_t j, double input_scale, double weight_scale) {
  double bound = 0, magnitude = 0;
  for (std::int64_t kk = 0; kk < k; ++kk) {
    const double wk = std::fabs(static_cast<double>(w[kk * n + j]));
    bound +=
        std::fabs(double(x[kk])) * weight_scale / 2 + input_scale / 2 * (wk + weight_scale / 2);
    magnitude += std::fabs(double(x[kk])) * wk;
  }
  return bound + (magnitude + bound) * std::ldexp(1.0, -22);  // float32's rounding of the result
}

}  // namespace dtnn
