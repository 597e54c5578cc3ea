// Activations saved for backward as packed bf16 copies (training.saved_activations,
// layer_chain.hpp): the float32 outputs live in their level's two shared forward buffers, backward
// unpacks the copies. Where backward reads the activations only through bf16 products
// (training.precision "bf16": convolutions through i2c, fc) the step must be the same, value for
// value; elsewhere the gradients may move by bf16's rounding of what backward reads, and no more.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dtnn/block_layer.hpp"
#include "dtnn/config.hpp"
#include "dtnn/error.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "dtnn/precision.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

Model build(const std::string& layers, Shape input, Precision saved,
            Precision precision = Precision::fp32, Layout layout = Layout::nhwc) {
  ModelOptions o;
  o.max_batch = 4;
  o.seed = 11;
  o.layout = layout;
  o.precision = precision;
  o.saved_activations = saved;
  return Model(parse_model_spec(json::parse(R"({"name": "m", "layers": )" + layers + "}"), "test"),
               o, input, test::plugins());
}

Tensor inputs(const Shape& shape) {
  Tensor x = Tensor::empty(shape, DType::float32);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = static_cast<float>(std::sin(0.37 * double(i)) + 0.1);
  return x;
}

Tensor one_hot(std::int64_t n, std::int64_t classes) {
  Tensor y = Tensor::zeros(Shape{n, classes}, DType::float32);
  for (std::int64_t r = 0; r < n; ++r) y.data<float>()[r * classes + r % classes] = 1;
  return y;
}

// The output, then every parameter gradient, of two training steps on batches of n and n - 1
// samples (the second on other memory than the first left).
std::vector<std::vector<float>> steps(Model& m, const Shape& sample, std::int64_t n) {
  auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
  std::vector<std::vector<float>> all;
  for (const std::int64_t batch : {n, n - 1}) {
    const Tensor x = inputs(sample.with_batch(batch));
    const Tensor y = one_hot(batch, 4);
    m.zero_grad();
    const Tensor& out = m.forward(x, Mode::train);
    all.emplace_back(out.data<float>(), out.data<float>() + out.numel());
    m.backward(*loss, y);
    for (const Parameter& p : m.parameters())
      all.emplace_back(p.grad.data<float>(), p.grad.data<float>() + p.grad.numel());
  }
  return all;
}

const std::string kConv = R"({"type": "conv2d", "filters": 3, "kernel": 3, "padding": 1})";

// conv2d, relu in place, flatten, nested add blocks (the first path's output in the level's
// buffers), a concat block, fc: every place a chain keeps an activation.
std::string products_and_relus() {
  const std::string inner = R"({"type": "add", "paths": [[)" + kConv + R"(, {"type": "relu"}, )" +
                            kConv + R"(], [{"type": "pointwise_conv2d", "filters": 3}]]})";
  const std::string outer = R"({"type": "add", "paths": [[)" + kConv + R"(, {"type": "relu"}, )" +
                            inner + ", " + kConv + R"(], []]}, {"type": "relu"})";
  const std::string concat = R"({"type": "concat", "paths": [[)" + kConv + R"(, {"type": "relu"}],
                                 [{"type": "pointwise_conv2d", "filters": 2}]]})";
  return "[" + kConv + R"(, {"type": "relu"}, )" + outer + ", " + outer + ", " + concat +
         R"(, {"type": "relu"}, {"type": "flatten"}, {"type": "fc", "units": 6},
            {"type": "relu"}, {"type": "fc", "units": 4}, {"type": "softmax"}])";
}

}  // namespace

TEST_CASE(
    "activations saved in bf16 change nothing where backward reads them through bf16 "
    "products") {
  // training.precision bf16 rounds what the products read to bf16 anyway: the copies hold those
  // very values (relu's backward reads only their signs).
  for (const Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    const Shape sample = layout == Layout::nhwc ? Shape{6, 6, 2} : Shape{2, 6, 6};
    Model packed = build(products_and_relus(), sample, Precision::bf16, Precision::bf16, layout);
    Model plain = build(products_and_relus(), sample, Precision::fp32, Precision::bf16, layout);
    const auto a = steps(packed, sample, 4), b = steps(plain, sample, 4);
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      CAPTURE(k);
      CHECK(a[k] == b[k]);
    }
    // The outputs before the last of each chain are in the level's two shared buffers, one after
    // the other: the first conv2d's (then relu's over it) and the first block's.
    packed.forward(inputs(sample.with_batch(4)), Mode::train);
    CHECK(packed.layer_output(0).raw() == packed.layer_output(1).raw());
    CHECK(packed.layer_output(2).raw() != packed.layer_output(1).raw());
    CHECK(packed.layer_output(4).raw() == packed.layer_output(1).raw());
    CHECK(plain.layer_output(4).raw() != plain.layer_output(1).raw());
  }
}

TEST_CASE("activations saved in bf16 move the gradients by bf16's rounding and no more") {
  // batchnorm and maxpool read their input, tanh and sigmoid their output (not in place), in
  // float32 products: the copies' rounding (relative 2^-9) moves the gradients a little, which
  // the check sees (packing is really on), and a copy of the wrong activation, or none, would
  // move them far more.
  const std::string layers = "[" + kConv + R"(, {"type": "batchnorm"}, {"type": "relu"},
      {"type": "add", "paths": [[)" +
                             kConv + R"(, {"type": "batchnorm"}, {"type": "relu"}, )" + kConv +
                             R"(, {"type": "batchnorm"}], []]}, {"type": "relu"},
      {"type": "maxpool2d", "pool": 2}, )" +
                             kConv + R"(, {"type": "tanh"}, {"type": "sigmoid"},
      {"type": "flatten"}, {"type": "fc", "units": 8}, {"type": "tanh"}, {"type": "fc", "units": 4},
      {"type": "softmax"}])";
  const Shape sample{6, 6, 2};
  Model packed = build(layers, sample, Precision::bf16),
        plain = build(layers, sample, Precision::fp32);
  const auto a = steps(packed, sample, 4), b = steps(plain, sample, 4);
  REQUIRE(a.size() == b.size());
  // Per step: the output (forward reads no copy: the same), then the gradients. Their bound:
  // 2% of each tensor's norm, and 2^-10 of the step's largest gradient norm for sums that
  // cancel (a conv2d's biases before batchnorm have none but rounding).
  const std::size_t per_step = a.size() / 2;
  double moved = 0;
  for (std::size_t step = 0; step < 2; ++step) {
    const std::size_t first = step * per_step;
    CHECK(a[first] == b[first]);
    double largest = 0;
    for (std::size_t k = first + 1; k < first + per_step; ++k) {
      double norm = 0;
      for (const float g : b[k]) norm += double(g) * g;
      largest = std::max(largest, std::sqrt(norm));
    }
    for (std::size_t k = first + 1; k < first + per_step; ++k) {
      double diff = 0, norm = 0;
      for (std::size_t i = 0; i < a[k].size(); ++i) {
        diff += (double(a[k][i]) - b[k][i]) * (double(a[k][i]) - b[k][i]);
        norm += double(b[k][i]) * b[k][i];
      }
      CAPTURE(k);
      CHECK(std::sqrt(diff) <= 0.02 * std::sqrt(norm) + std::ldexp(largest, -10));
      moved = std::max(moved, std::sqrt(diff));
    }
  }
  CHECK(moved > 0);
}

TEST_CASE("activations saved in bf16 take about half the memory") {
  // ResNet-20 at CIFAR's size: the summary counts the copies and the levels' forward buffers.
  const std::string path = "[" + kConv + R"(, {"type": "batchnorm"}, {"type": "relu"}, )" + kConv +
                           R"(, {"type": "batchnorm"}])";
  const std::string block = R"({"type": "add", "paths": [)" + path + R"(, []]}, {"type": "relu"})";
  const std::string projection =
      R"({"type": "add", "paths": [)" + path +
      R"(, [{"type": "pointwise_conv2d", "filters": 3}, {"type": "batchnorm"}]]}, {"type": "relu"})";
  auto resnet = [&](const std::string& first_block) {
    std::string layers =
        "[" + kConv + R"(, {"type": "batchnorm"}, {"type": "relu"}, )" + first_block;
    for (int i = 1; i < 9; ++i) layers += ", " + block;
    return layers + R"(, {"type": "flatten"}, {"type": "fc", "units": 4}, {"type": "softmax"}])";
  };
  // The summary's MiB after `key` in its total line, and the activations of layer `row`.
  auto mib = [](const Model& m, const std::string& key) {
    const std::string table = m.memory_table(0);
    const auto at = table.find(key);
    REQUIRE(at != std::string::npos);
    return std::stod(table.substr(at + key.size()));
  };
  auto row_mib = [](const Model& m, int row) {
    const std::string table = m.memory_table(0), key = "| " + std::to_string(row) + " |";
    const auto at = table.find(std::string(5 - std::to_string(row).size(), ' ') + key.substr(2));
    REQUIRE(at != std::string::npos);
    const auto cell = table.find('|', table.find('|', at + 1) + 1);  // after the type's cell
    return std::stod(table.substr(cell + 1));
  };
  const Model packed = build(resnet(block), Shape{32, 32, 3}, Precision::bf16);
  const Model plain = build(resnet(block), Shape{32, 32, 3}, Precision::fp32);
  CAPTURE(packed.memory_table(0));
  // Every activation backward reads is a copy of half the size; beside them, the input (the
  // caller's), and two forward buffers for each level (the model's chain, the blocks' paths) of
  // the largest output, 4 x 32 x 32 x 3 values.
  const double input = 4 * 32 * 32 * 3 * 4 / 1048576.0, shared = 4 * input;
  CHECK(mib(packed, "of which shared forward buffers ") == doctest::Approx(shared).epsilon(1e-3));
  const double copies = mib(packed, "(activations ") - shared - input;
  const double float32 = mib(plain, "(activations ") - input;
  CHECK(copies / float32 > 0.49);
  CHECK(copies / float32 < 0.51);
  // A projection shortcut's output is written into the block's own output: the block keeps one
  // copy more than an identity block (the pointwise conv2d's output, which batchnorm reads), and
  // no float32 memory (with it, 0.047 MiB more).
  const Model projected = build(resnet(projection), Shape{32, 32, 3}, Precision::bf16);
  CAPTURE(projected.memory_table(0));
  const double more = row_mib(projected, 4) - row_mib(packed, 4);
  CHECK(std::abs(more - input / 2) < 0.002);  // the table's rows to 0.001 MiB
}

TEST_CASE("activations saved in bf16 need float32 on the cpu") {
  auto model_with = [](const ModelOptions& o) {
    Model(parse_model_spec(json::parse(R"({"name": "m", "layers": [{"type": "fc", "units": 2}]})"),
                           "test"),
          o, Shape{3}, test::plugins());
  };
  ModelOptions o;
  o.dtype = DType::float64;
  o.saved_activations = Precision::bf16;
  CHECK_THROWS_WITH_AS(model_with(o), doctest::Contains("only bf16, of float32 tensors on the cpu"),
                       Error);
  o.dtype = DType::float32;
  o.saved_activations = Precision::fp16;
  CHECK_THROWS_AS(model_with(o), Error);
}

TEST_CASE("packing to bf16 and back is to_bf16 and its inverse at every level") {
  std::vector<float> values = {0.0f,    -0.0f,  1.0f,          1.00390625f, 1.005859375f, -3.3e38f,
                               3.4e38f, 1e-40f, std::nanf(""), INFINITY,    -INFINITY};
  for (int i = 0; i < 300; ++i) values.push_back(static_cast<float>(std::sin(1.7 * i) * 1e3));
  for (const isa::Level level : round_kernels().built()) {
    const RoundKernels* kernels = round_kernels().at(level);
    if (!kernels) continue;  // above this CPU
    CAPTURE(isa::name(level));
    const RoundKernels& k = *kernels;
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(17), values.size()}) {
      std::vector<std::uint16_t> bits(n + 1, 0xBEEF);
      std::vector<float> back(n + 1, 7.0f);
      k.pack_bf16(values.data(), bits.data(), static_cast<std::int64_t>(n));
      k.unpack_bf16(bits.data(), back.data(), static_cast<std::int64_t>(n));
      for (std::size_t i = 0; i < n; ++i) {
        CAPTURE(values[i]);
        CHECK(bits[i] == to_bf16(values[i]));
        const float expected = from_bf16(to_bf16(values[i]));
        CHECK((std::memcmp(&back[i], &expected, sizeof expected) == 0));
      }
      CHECK(bits[n] == 0xBEEF);  // nothing past the end
      CHECK(back[n] == 7.0f);
    }
  }
}
