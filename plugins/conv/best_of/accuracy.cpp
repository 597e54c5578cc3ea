#include "accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtnn::best_of {

namespace {

// A copy of t's first `rows` entries along dim 0 (all of t when it has fewer).
Tensor first_rows(const Tensor& t, std::int64_t rows) {
  const Tensor part = t.slice_batch(0, std::min(rows, t.dim(0)));
  Tensor copy = Tensor::empty(part.shape(), part.dtype(), part.layout());
  copy.copy_from(part);
  return copy;
}

Tensor as_float64(const Tensor& t) {
  Tensor out = Tensor::empty(t.shape(), DType::float64, t.layout());
  dispatch_dtype(t.dtype(), [&](auto z) {
    using T = decltype(z);
    const T* in = t.data<T>();
    double* o = out.data<double>();
    for (std::int64_t i = 0; i < t.numel(); ++i) o[i] = static_cast<double>(in[i]);
  });
  return out;
}

std::vector<double> values(const Tensor& t) {
  const double* p = t.data<double>();
  return std::vector<double>(p, p + t.numel());
}

}  // namespace

double PassErrors::worst() const { return std::max({forward, backward_data, backward_filter}); }

std::string PassErrors::str() const {
  char text[160];
  std::snprintf(text, sizeof text, "%.2g (forward %.2g, backward-data %.2g, backward-filter %.2g)",
                worst(), forward, backward_data, backward_filter);
  return text;
}

double relative_error(const Tensor& got, const std::vector<double>& exact) {
  double diff = 0, scale = 0;
  bool finite = true;
  dispatch_dtype(got.dtype(), [&](auto z) {
    using T = decltype(z);
    const T* g = got.data<T>();
    for (std::size_t i = 0; i < exact.size(); ++i) {
      const double v = static_cast<double>(g[i]);
      if (!std::isfinite(v)) finite = false;
      diff = std::max(diff, std::abs(v - exact[i]));
      scale = std::max(scale, std::abs(exact[i]));
    }
  });
  if (!finite) return INFINITY;
  if (scale == 0) return diff == 0 ? 0.0 : INFINITY;
  return diff / scale;
}

AccuracySample::AccuracySample(const ConvGeometry& g, std::shared_ptr<ConvAlgorithm> reference)
    : g_(g), reference_(std::move(reference)), samples_(std::min(g.n, samples_for(g))) {
  ConvGeometry exact = g_;
  exact.n = samples_;
  exact.dtype = DType::float64;
  reference_->prepare(exact);
}

std::int64_t AccuracySample::samples_for(const ConvGeometry& g) {
  constexpr double kFlopsBudget = 2e8;  // of one pass: about 0.2-0.5 s for the three in double
  const double per_sample =
      2.0 * static_cast<double>(g.ho() * g.wo()) * static_cast<double>(g.k * g.c * g.kh * g.kw);
  const double fit = std::floor(kFlopsBudget / std::max(per_sample, 1.0));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::min(fit, 8.0)), 1, 8);
}

void AccuracySample::keep_input(const Tensor& x, const Tensor& w) {
  if (have_input_) return;
  x_ = first_rows(x, samples_);
  w_ = Tensor::empty(w.shape(), w.dtype(), w.layout());
  w_.copy_from(w);
  have_input_ = true;
}

void AccuracySample::keep_gradient(const Tensor& dy) {
  if (have_gradient_) return;
  dy_ = first_rows(dy, samples_);
  have_gradient_ = true;
}

void AccuracySample::compute_exact() {
  const Tensor x = as_float64(x_), w = as_float64(w_), dy = as_float64(dy_);
  Tensor y = Tensor::zeros(dy.shape(), DType::float64, dy.layout());
  Tensor dx = Tensor::zeros(x.shape(), DType::float64, x.layout());
  Tensor dw = Tensor::zeros(w.shape(), DType::float64, w.layout());
  reference_->forward(x, w, y);
  reference_->backward_data(dy, w, dx);
  reference_->backward_filter(x, dy, dw);
  y_exact_ = values(y), dx_exact_ = values(dx), dw_exact_ = values(dw);
  for (double& v : dw_exact_) v *= 2;  // errors_of accumulates two backward-filter passes
  have_exact_ = true;
}

PassErrors AccuracySample::errors_of(ConvAlgorithm& candidate) {
  if (!have_exact_) compute_exact();
  Tensor y = Tensor::zeros(dy_.shape(), g_.dtype, dy_.layout());
  Tensor dx = Tensor::zeros(x_.shape(), g_.dtype, x_.layout());
  Tensor dw = Tensor::zeros(w_.shape(), g_.dtype, w_.layout());
  candidate.forward(x_, w_, y);
  candidate.backward_filter(x_, dy_, dw);  // right after the forward of the same x, as in training
  candidate.backward_filter(x_, dy_, dw);  // twice: it must add to dw, not overwrite it
  candidate.backward_data(dy_, w_, dx);
  return {relative_error(y, y_exact_), relative_error(dx, dx_exact_),
          relative_error(dw, dw_exact_)};
}

}  // namespace dtnn::best_of
