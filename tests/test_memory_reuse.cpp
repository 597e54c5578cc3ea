// Memory the training step reuses: activations written in place (an activation over the output
// of a layer that does not read it) and dLoss/d(activation) buffers shared by every chain of a
// nesting level (gradient_buffers.hpp). Both must change nothing but the memory.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dtnn/block_layer.hpp"
#include "dtnn/config.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

Model build(const std::string& layers, Shape input, DType dtype = DType::float32) {
  ModelOptions o;
  o.dtype = dtype;
  o.max_batch = 3;
  o.seed = 7;
  return Model(parse_model_spec(json::parse(R"({"name": "m", "layers": )" + layers + "}"), "test"),
               o, input, test::plugins());
}

template <class T>
Tensor inputs(const Shape& shape, DType dtype) {
  Tensor x = Tensor::empty(shape, dtype);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data<T>()[i] = static_cast<T>(std::sin(0.37 * double(i)) + 0.1);
  return x;
}

Tensor one_hot(std::int64_t n, std::int64_t classes, DType dtype) {
  Tensor y = Tensor::zeros(Shape{n, classes}, dtype);
  for (std::int64_t r = 0; r < n; ++r)
    dispatch_dtype(dtype, [&](auto z) { y.data<decltype(z)>()[r * classes + r % classes] = 1; });
  return y;
}

// The output and every parameter gradient of a training step, as doubles.
std::vector<std::vector<double>> step(Model& m, const Tensor& x, const Tensor& y) {
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  m.zero_grad();
  const Tensor& out = m.forward(x, Mode::train);
  std::vector<std::vector<double>> all(1);
  for (std::int64_t i = 0; i < out.numel(); ++i) all[0].push_back(out.data<float>()[i]);
  m.backward(*loss, y);
  for (const Parameter& p : m.parameters())
    all.emplace_back(p.grad.data<float>(), p.grad.data<float>() + p.grad.numel());
  return all;
}

const std::string kConv = R"({"type": "conv2d", "filters": 3, "kernel": 3, "padding": 1})";

}  // namespace

TEST_CASE(
    "an activation runs in place only over an output nobody reads again, and changes nothing") {
  // relu after conv2d, after batchnorm and after an add block writes over their outputs; sigmoid
  // after tanh must not (tanh's backward reads its output), nor tanh after relu. leaky_relu with
  // slope 0 is relu that never runs in place: the step must be the same, value for value.
  const std::string layers = "[" + kConv + R"(, {"type": "relu"}, )" + kConv +
                             R"(, {"type": "batchnorm"}, {"type": "relu"},
      {"type": "add", "paths": [[)" +
                             kConv + R"(, {"type": "relu"}, )" + kConv + R"(], []]},
      {"type": "relu"}, {"type": "tanh"}, {"type": "sigmoid"}, {"type": "flatten"},
      {"type": "fc", "units": 4}, {"type": "softmax"}])";
  std::string never = layers;
  for (std::size_t at; (at = never.find(R"("relu")")) != std::string::npos;)
    never.replace(at, 6, R"("leaky_relu", "negative_slope": 0)");
  Model in_place = build(layers, Shape{5, 5, 2}), copies = build(never, Shape{5, 5, 2});
  // Whether layer i's output is where layer i - 1's is: in place, or flatten's view.
  const std::vector<bool> expected = {false, true,  false, false, true,  false,
                                      true,  false, false, true,  false, false};
  REQUIRE(in_place.num_layers() == expected.size());
  const auto& chain_of = [](Model& m, std::size_t i) {
    return m.layer_output(i).raw() == (i ? m.layer_output(i - 1).raw() : nullptr);
  };
  const Tensor x = inputs<float>(Shape{3, 5, 5, 2}, DType::float32);
  const Tensor y = one_hot(3, 4, DType::float32);
  const auto a = step(in_place, x, y), b = step(copies, x, y);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(chain_of(in_place, i) == expected[i]);
    CHECK(chain_of(copies, i) == (i == 9));
  }
  REQUIRE(a.size() == b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    CAPTURE(k);
    CHECK(a[k] == b[k]);
  }
  // The table counts such an output once, on the layer that holds it.
  const std::string table = in_place.memory_table(0);
  CAPTURE(table);
  CHECK(table.find("|     1 | conv2d    |           0.000 |") != std::string::npos);
}

TEST_CASE("blocks share their level's gradient buffers: as many blocks cost what one does") {
  const std::string block = R"({"type": "add", "paths": [[)" + kConv + R"(, {"type": "relu"}, )" +
                            kConv + R"(], []]}, {"type": "relu"})";
  auto blocks = [&](int n) {
    std::string s = "[" + kConv;
    for (int i = 0; i < n; ++i) s += ", " + block;
    return s + R"(, {"type": "flatten"}, {"type": "fc", "units": 4}, {"type": "softmax"}])";
  };
  Model two = build(blocks(2), Shape{6, 6, 2}), six = build(blocks(6), Shape{6, 6, 2});
  CHECK(two.gradient_buffer_bytes() > 0);
  CHECK(six.gradient_buffer_bytes() == two.gradient_buffer_bytes());
  // An add block sums into its first path's last output (a conv2d's, which backward does not
  // read): the block's output is that memory, and the relu after it runs in place there too.
  six.forward(inputs<float>(Shape{3, 6, 6, 2}, DType::float32), Mode::train);
  auto& add = dynamic_cast<BlockLayer&>(six.layer(1));
  CHECK(six.layer_output(1).raw() == add.path(0).output(add.path(0).size() - 1).raw());
  CHECK(six.layer_output(2).raw() == six.layer_output(1).raw());
}

TEST_CASE("gradients through nested blocks sharing buffers equal finite differences") {
  // A block in a block's path in a model of two blocks (float64): every chain level's ping, pong
  // and scratch buffers are in use in one backward.
  // The inner block's first path ends in tanh after tanh (its backward reads its output, and it
  // does not run in place after another tanh): that block sums
  // into memory of its own; the outer one into its first path's last conv2d output.
  const std::string inner =
      R"({"type": "add", "paths": [[)" + kConv +
      R"(, {"type": "tanh"}, {"type": "tanh"}], [{"type": "pointwise_conv2d", "filters": 3}]]})";
  const std::string outer = R"({"type": "add", "paths": [[)" + kConv + R"(, {"type": "relu"}, )" +
                            inner + ", " + kConv + R"(], []]}, {"type": "tanh"})";
  const std::string layers = "[" + kConv + ", " + outer + ", " + outer +
                             R"(, {"type": "flatten"}, {"type": "fc", "units": 4},
                                {"type": "softmax"}])";
  Model m = build(layers, Shape{4, 4, 2}, DType::float64);
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  const Tensor x = inputs<double>(Shape{3, 4, 4, 2}, DType::float64);
  const Tensor y = one_hot(3, 4, DType::float64);
  m.zero_grad();
  loss->forward(m.forward(x, Mode::train), y);
  m.backward(*loss, y);
  int checked = 0;
  for (const Parameter& p : m.parameters()) {
    double* w = p.value.data<double>();
    for (std::int64_t i = 0; i < p.value.numel(); i += 5) {
      const double saved = w[i], h = 1e-6;
      w[i] = saved + h;
      const double up = loss->forward(m.forward(x, Mode::train), y);
      w[i] = saved - h;
      const double down = loss->forward(m.forward(x, Mode::train), y);
      w[i] = saved;
      const double numeric = (up - down) / (2 * h), analytic = p.grad.data<double>()[i];
      CAPTURE(p.name);
      CAPTURE(i);
      CHECK(std::abs(numeric - analytic) <= 1e-6 * (1 + std::abs(numeric)));
      ++checked;
    }
  }
  CHECK(checked > 50);
}
