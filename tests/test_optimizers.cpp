// Optimizer steps against values computed by hand (two steps: gradients 0.5, then -0.25 on a
// weight starting at 1.0; the expected numbers follow the formulas in each plugin's header).
#include <doctest/doctest.h>

#include "dtnn/optimizer.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {
double two_steps(const std::string& name, const json& params, DType dtype = DType::float64) {
  auto opt = test::plugins().create_as<Optimizer>("optimizer", name, Params(params, "test"));
  Parameter p{"w", Tensor::empty(Shape{1}, dtype), Tensor::empty(Shape{1}, dtype)};
  std::vector<Parameter> ps{p};
  opt->build(ps);
  dispatch_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    p.value.data<T>()[0] = T(1.0);
    for (double g : {0.5, -0.25}) {
      p.grad.data<T>()[0] = T(g);
      opt->step(ps);
    }
  });
  return dispatch_dtype(dtype, [&](auto z) { return double(p.value.data<decltype(z)>()[0]); });
}
}  // namespace

TEST_CASE("sgd: plain, momentum, nesterov, weight decay") {
  // plain: 1 - 0.1*0.5 + 0.1*0.25
  CHECK(two_steps("sgd", {{"learning_rate", 0.1}}) == doctest::Approx(0.975).epsilon(1e-12));
  // momentum 0.9, decay 0.01: v1 = 0.51, w1 = 0.949; v2 = 0.459 - 0.25 + 0.00949 = 0.21849, w2 =
  // 0.927151
  CHECK(two_steps("sgd", {{"learning_rate", 0.1}, {"momentum", 0.9}, {"decay", 0.01}}) ==
        doctest::Approx(0.927151).epsilon(1e-12));
  // nesterov: w1 = 1 - 0.1*(0.51 + 0.9*0.51) = 0.9031; w2 = 0.9031 - 0.1*(-0.240969 + 0.9*0.218031)
  CHECK(
      two_steps("sgd",
                {{"learning_rate", 0.1}, {"momentum", 0.9}, {"nesterov", true}, {"decay", 0.01}}) ==
      doctest::Approx(0.90757411).epsilon(1e-12));
}

TEST_CASE("adam: bias-corrected steps") {
  // step 1 moves by lr * g / (|g| + eps) = 0.1 * 0.5 / (0.5 + 1e-8)
  CHECK(two_steps("adam", {{"learning_rate", 0.1}}) ==
        doctest::Approx(0.8733662987078463).epsilon(1e-12));
  CHECK(two_steps("adam", {{"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.8712293476231743).epsilon(1e-12));
  CHECK(two_steps("adam", {{"learning_rate", 0.1}}, DType::float32) ==
        doctest::Approx(0.8733663).epsilon(1e-6));
}

TEST_CASE("a step consumes the gradients: they are zero afterwards") {
  for (const char* name : {"sgd", "adam"}) {
    auto opt = test::plugins().create_as<Optimizer>("optimizer", name, Params());
    Parameter p{"w", Tensor::zeros(Shape{3}, DType::float32),
                Tensor::empty(Shape{3}, DType::float32)};
    for (int i = 0; i < 3; ++i) p.grad.data<float>()[i] = 1.0f + float(i);
    std::vector<Parameter> ps{p};
    opt->build(ps);
    opt->step(ps);
    CHECK(p.value.data<float>()[2] < 0.0f);
    for (int i = 0; i < 3; ++i) CHECK(p.grad.data<float>()[i] == 0.0f);
  }
}

TEST_CASE("optimizer learning rate can be changed by schedulers") {
  auto opt = test::plugins().create_as<Optimizer>("optimizer", "adam", Params());
  CHECK(opt->learning_rate() == 0.001);
  opt->set_learning_rate(0.5);
  CHECK(opt->learning_rate() == 0.5);
}
