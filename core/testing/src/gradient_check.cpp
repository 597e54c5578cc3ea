#include "dtnn/testing/gradient_check.hpp"

#include <algorithm>
#include <cmath>

#include "dtnn/testing/guarded.hpp"

namespace dtnn::testing {

namespace {

double weighted_sum(const Tensor& y, const Tensor& r) {
  double s = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) s += value_at(y, i) * value_at(r, i);
  return s;
}

double error(double analytic, double numeric) {
  return std::abs(analytic - numeric) /
         std::max(1.0, std::max(std::abs(analytic), std::abs(numeric)));
}

}  // namespace

GradientCheck check_gradients(Layer& layer, const Shape& input_shape, std::int64_t batch,
                              Layout layout, std::uint64_t seed, double step) {
  const DType dt = DType::float64;
  Tensor x = Tensor::empty(input_shape.with_batch(batch), dt, layout);
  Tensor y = Tensor::empty(layer.output_shape().with_batch(batch), dt, layout);
  Tensor r = Tensor::empty(y.shape(), dt, layout);
  Tensor dx = Tensor::empty(x.shape(), dt, layout);
  fill_uniform(x, seed);
  fill_uniform(r, seed + 1);
  auto loss = [&] {
    layer.forward(x, y, Mode::train);
    return weighted_sum(y, r);
  };

  std::vector<Parameter> params = layer.parameters();
  for (auto& p : params) p.grad.fill_zero();
  loss();
  layer.backward(x, y, r, &dx);

  GradientCheck out;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = value_at(x, i);
    set_value_at(x, i, v + step);
    const double up = loss();
    set_value_at(x, i, v - step);
    const double down = loss();
    set_value_at(x, i, v);
    out.input_error = std::max(out.input_error, error(value_at(dx, i), (up - down) / (2 * step)));
    ++out.checked;
  }
  for (auto& p : params) {
    for (std::int64_t i = 0; i < p.value.numel(); ++i) {
      const double v = value_at(p.value, i);
      set_value_at(p.value, i, v + step);
      const double up = loss();
      set_value_at(p.value, i, v - step);
      const double down = loss();
      set_value_at(p.value, i, v);
      out.parameter_error =
          std::max(out.parameter_error, error(value_at(p.grad, i), (up - down) / (2 * step)));
      ++out.checked;
    }
  }
  return out;
}

}  // namespace dtnn::testing
