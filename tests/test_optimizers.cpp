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

// The same two steps under PyDTNN's rules and for rmsprop and nadam (lr 0.1, decay 0.01, the
// rule's other defaults); each expected value follows the formulas in the plugin's header:
// sgd pydtnn, momentum 0.9: v1 = 0.5, w1 = 1 - 0.1 (0.01 + 0.5) = 0.949; v2 = 0.45 - 0.25 = 0.2,
// w2 = 0.949 - 0.1 (0.00949 + 0.2) = 0.928051.
TEST_CASE("sgd and adam under rule pydtnn") {
  CHECK(two_steps("sgd", {{"rule", "pydtnn"}, {"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.928051).epsilon(1e-12));
  // nesterov: w1 = 1 - 0.1 (0.01 + 0.5 + 0.45) = 0.904; w2 = 0.904 - 0.1 (0.00904 - 0.25 + 0.18)
  CHECK(two_steps(
            "sgd",
            {{"rule", "pydtnn"}, {"learning_rate", 0.1}, {"decay", 0.01}, {"nesterov", true}}) ==
        doctest::Approx(0.910096).epsilon(1e-12));
  // beta1 0.99, epsilon 1e-7 inside the root, decay outside the moments.
  CHECK(two_steps("adam", {{"rule", "pydtnn"}, {"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.8669503033276175).epsilon(1e-12));
}

TEST_CASE("rmsprop: textbook and pydtnn") {
  // textbook: g1 = 0.51, s1 = 0.01 * 0.51^2, w1 = 1 - 0.1 * 0.51 / 0.051 = 0 (up to epsilon);
  // g2 = -0.25, s2 = 0.99 s1 + 0.01 * 0.0625, w2 = 0.1 * 0.25 / sqrt(s2) = 0.44194...
  CHECK(two_steps("rmsprop", {{"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.4419425439411226).epsilon(1e-9));
  CHECK(two_steps("rmsprop", {{"rule", "pydtnn"}, {"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.8295317933051327).epsilon(1e-12));
}

TEST_CASE("nadam: textbook (PyTorch's momentum schedule) and pydtnn") {
  CHECK(two_steps("nadam", {{"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.9333264991318859).epsilon(1e-12));
  CHECK(two_steps("nadam", {{"rule", "pydtnn"}, {"learning_rate", 0.1}, {"decay", 0.01}}) ==
        doctest::Approx(0.798836768871261).epsilon(1e-12));
  CHECK(two_steps("nadam", {{"learning_rate", 0.1}, {"decay", 0.01}}, DType::float32) ==
        doctest::Approx(0.9333265).epsilon(1e-6));
}

TEST_CASE("an unknown rule is refused with the choices") {
  CHECK_THROWS_WITH(test::plugins().create_as<Optimizer>(
                        "optimizer", "sgd", Params(json{{"rule", "keras"}}, "exp.json: optimizer")),
                    "exp.json: optimizer.rule: expected \"textbook\" (PyTorch's formulas) or "
                    "\"pydtnn\", got \"keras\"");
}

TEST_CASE("a step consumes the gradients: they are zero afterwards") {
  for (const char* name : {"sgd", "adam", "rmsprop", "nadam"}) {
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
