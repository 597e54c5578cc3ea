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

void fill_input(Tensor& x, std::uint64_t seed, const InputValues& values) {
  const std::int64_t tokens = values.tokens;
  if (tokens <= 0) return fill_uniform(x, seed, values.lo, values.hi);
  fill_uniform(x, seed, 0.0, double(tokens));
  for (std::int64_t i = 0; i < x.numel(); ++i)
    set_value_at(x, i, std::min(std::floor(value_at(x, i)), double(tokens - 1)));
}

GradientCheck check_gradients(Layer& layer, const Shape& input_shape, std::int64_t batch,
                              Layout layout, std::uint64_t seed, double step, InputValues values,
                              DecoderMemory* memory) {
  const DType dt = DType::float64;
  Tensor x = Tensor::empty(input_shape.with_batch(batch), dt, layout);
  Tensor y = Tensor::empty(layer.output_shape().with_batch(batch), dt, layout);
  Tensor r = Tensor::empty(y.shape(), dt, layout);
  Tensor dx = Tensor::empty(x.shape(), dt, layout);
  fill_input(x, seed, values);
  fill_uniform(r, seed + 1);
  auto loss = [&] {
    layer.forward(x, y, Mode::train);
    return weighted_sum(y, r);
  };

  // Numeric gradients first, analytic after: a layer with per-step randomness (dropout) keeps one
  // draw until its next backward, so every evaluation below sees the same function.
  std::vector<Parameter> params = layer.parameters();
  auto numeric = [&](Tensor& v, std::int64_t i) {
    const double old = value_at(v, i);
    set_value_at(v, i, old + step);
    const double up = loss();
    set_value_at(v, i, old - step);
    const double down = loss();
    set_value_at(v, i, old);
    return (up - down) / (2 * step);
  };
  std::vector<double> dx_numeric(static_cast<std::size_t>(x.numel()), 0.0);
  if (values.tokens <= 0)
    for (std::int64_t i = 0; i < x.numel(); ++i)
      dx_numeric[static_cast<std::size_t>(i)] = numeric(x, i);
  std::vector<std::vector<double>> dp_numeric;
  for (auto& p : params) {
    dp_numeric.emplace_back(static_cast<std::size_t>(p.value.numel()));
    for (std::int64_t i = 0; i < p.value.numel(); ++i)
      dp_numeric.back()[static_cast<std::size_t>(i)] = numeric(p.value, i);
  }
  std::vector<double> dm_numeric;
  Tensor memory_rows = memory ? memory->value.slice_batch(0, batch) : Tensor();
  if (memory)
    for (std::int64_t i = 0; i < memory_rows.numel(); ++i)
      dm_numeric.push_back(numeric(memory_rows, i));

  for (auto& p : params) p.grad.fill_zero();
  if (memory) memory->grad.fill_zero();
  loss();
  layer.backward(x, y, r, &dx);

  GradientCheck out;
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    out.input_error =
        std::max(out.input_error, error(value_at(dx, i), dx_numeric[static_cast<std::size_t>(i)]));
    ++out.checked;
  }
  for (std::size_t k = 0; k < params.size(); ++k)
    for (std::int64_t i = 0; i < params[k].value.numel(); ++i) {
      out.parameter_error =
          std::max(out.parameter_error,
                   error(value_at(params[k].grad, i), dp_numeric[k][static_cast<std::size_t>(i)]));
      ++out.checked;
    }
  for (std::size_t i = 0; i < dm_numeric.size(); ++i) {
    const auto at = static_cast<std::int64_t>(i);
    out.memory_error = std::max(out.memory_error, error(value_at(memory->grad, at), dm_numeric[i]));
    ++out.checked;
  }
  return out;
}

}  // namespace dtnn::testing
