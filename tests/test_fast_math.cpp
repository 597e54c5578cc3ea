// The vectorisable exp and tanh (dtnn/fast_math.hpp) and the lane-wise reductions
// (dtnn/reductions.hpp) against libm and sequential double sums.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "dtnn/fast_math.hpp"
#include "dtnn/reductions.hpp"

using namespace dtnn;

TEST_CASE("fast::exp is within 3 ulp of exp over the whole float range it serves") {
  double worst = 0;
  for (double x = -87.0; x <= 88.0; x += 0.000731) {
    const double exact = std::exp(double(float(x)));
    worst = std::max(worst, std::abs(double(fast::exp(float(x))) - exact) / exact);
  }
  MESSAGE("worst relative error " << worst);
  CHECK(worst < 3 * 5.97e-8);         // 3 ulp of float (2^-24 relative)
  CHECK(fast::exp(-1000.0f) > 0.0f);  // clamped: a normal float, never 0 or a denormal
  CHECK(std::isfinite(fast::exp(1000.0f)));
}

TEST_CASE("fast::tanh is within 2e-7 of tanh, odd, and saturates at +-1") {
  double worst = 0;
  for (double x = -20.0; x <= 20.0; x += 0.000317) {
    worst = std::max(worst, std::abs(double(fast::tanh(float(x))) - std::tanh(double(float(x)))));
    CHECK(fast::tanh(float(-x)) == -fast::tanh(float(x)));
  }
  MESSAGE("worst absolute error " << worst);
  CHECK(worst < 2e-7);
  CHECK(fast::tanh(30.0f) == 1.0f);
  CHECK(fast::tanh(-30.0f) == -1.0f);
}

TEST_CASE("lane-wise sum, dot and max agree with sequential ones at every length") {
  for (std::int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(static_cast<std::size_t>(n)), y(x.size());
    double sum = 0, dot = 0;
    float max = -1e30f;
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = float(std::sin(1.3 * double(i) + 0.2));
      y[i] = float(std::cos(0.7 * double(i)));
      sum += x[i];
      dot += double(x[i]) * y[i];
      max = std::max(max, x[i]);
    }
    CAPTURE(n);
    CHECK(reduce::sum(x.data(), n) == doctest::Approx(sum).epsilon(1e-5));
    CHECK(reduce::dot(x.data(), y.data(), n) == doctest::Approx(dot).epsilon(1e-5));
    CHECK(reduce::max(x.data(), n) == max);
  }
}
