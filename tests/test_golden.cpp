// A golden test in llm.c's manner: simplecnn's logits, probabilities, loss and parameter gradients
// for a fixed batch of Fashion-MNIST images and fixed weights, recorded once from PyTorch in
// float64 (tests/golden/record_simplecnn.py writes tests/golden/simplecnn.npz), must come out of
// dtnn: the model file, the layers, the conv algorithms, the loss and PyDTNN's weight layouts
// (both directions) in both tensor layouts.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "dtnn/npz.hpp"
#include "dtnn/pydtnn_weights.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

using Arrays = std::map<std::string, NpyArray>;

Arrays read(const std::filesystem::path& file) {
  Arrays out;
  for (auto& [key, a] : read_npz(file)) out.emplace(key, std::move(a));
  return out;
}

// The formula of record_simplecnn.py, in PyDTNN's layout (flattened in C order).
NpyArray weights(const std::vector<std::int64_t>& shape, int id, int attribute, double fan_in) {
  NpyArray a;
  a.dtype = DType::float64;
  a.item_size = 8;
  a.shape = shape;
  a.data.resize(static_cast<std::size_t>(a.numel()) * 8);
  auto* v = reinterpret_cast<double*>(a.data.data());
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const std::uint64_t h =
        (std::uint64_t(i) * 2654435761ull + 40503ull * id + 7919ull * attribute) %
        (std::uint64_t{1} << 32);
    v[i] = std::sqrt(3.0 / fan_in) * (2.0 * (double(h) / 4294967296.0) - 1.0);
  }
  return a;
}

void write_weights(const std::filesystem::path& file) {
  struct Layer {
    std::string key;
    std::vector<std::int64_t> shape;
    std::int64_t biases;
    double fan_in;
  };
  std::vector<std::pair<std::string, NpyArray>> arrays;
  for (const Layer& l :
       {Layer{"1_Conv2D", {4, 1, 3, 3}, 4, 9}, Layer{"3_Conv2D", {8, 4, 3, 3}, 8, 36},
        Layer{"7_FC", {1152, 128}, 128, 1152}, Layer{"9_FC", {128, 10}, 10, 128}}) {
    const int id = std::stoi(l.key);
    arrays.emplace_back(l.key + "_weights", weights(l.shape, id, 0, l.fan_in));
    arrays.emplace_back(l.key + "_biases", weights({l.biases}, id, 1, l.fan_in));
  }
  write_npz(file, arrays);
}

double worst_difference(const Tensor& t, const NpyArray& golden) {
  REQUIRE(t.numel() == golden.numel());
  double worst = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    worst = std::max(worst, std::abs(t.data<double>()[i] - golden.value(i)));
  return worst;
}

}  // namespace

TEST_CASE("golden: simplecnn's probabilities, loss and gradients equal PyTorch's") {
  const auto dir = test::temp_dir("golden");
  const Arrays golden =
      read(std::filesystem::path(DTNN_TEST_SOURCE_DIR) / "tests/golden/simplecnn.npz");
  write_weights(dir / "weights.npz");
  const NpyArray& images = golden.at("x");  // (8, 1, 28, 28): with one channel, NCHW is NHWC
  const std::int64_t n = images.shape[0];
  for (Layout layout : {Layout::nhwc, Layout::nchw})
    for (const char* algorithm : {"i2c", "direct", "implicit_gemm"}) {
      CAPTURE(to_string(layout));
      CAPTURE(algorithm);
      ModelOptions o;
      o.dtype = DType::float64;
      o.layout = layout;
      o.max_batch = n;
      o.conv_algorithm = algorithm;
      Model model(test::zoo_model("simplecnn"), o,
                  layout == Layout::nhwc ? Shape{28, 28, 1} : Shape{1, 28, 28}, test::plugins());
      load_pydtnn_weights(model, dir / "weights.npz");
      Tensor x = Tensor::empty(model.input_shape().with_batch(n), DType::float64, layout);
      for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = images.value(i);
      Tensor y = Tensor::zeros(Shape{n, 10}, DType::float64);
      for (std::int64_t r = 0; r < n; ++r)
        y.data<double>()[r * 10 + std::int64_t(golden.at("labels").value(r))] = 1.0;

      const Tensor& p = model.forward(x, Mode::train);
      CHECK(worst_difference(model.layer_output(model.num_layers() - 2), golden.at("logits")) <
            1e-12);
      CHECK(worst_difference(p, golden.at("probabilities")) < 1e-14);
      auto loss = test::plugins().create_as<Loss>("loss", "categorical_cross_entropy", Params());
      CHECK(std::abs(loss->forward(p, y) - golden.at("loss").value(0)) < 1e-13);

      // The gradients, through PyDTNN's layouts: written as weights, read back by key.
      model.zero_grad();
      model.backward(*loss, y);
      for (const Parameter& q : model.parameters()) Tensor(q.value).copy_from(q.grad);
      save_pydtnn_weights(model, dir / "gradients.npz");
      const Arrays grads = read(dir / "gradients.npz");
      int compared = 0;
      for (const auto& [key, g] : grads) {
        CAPTURE(key);
        const auto* values = reinterpret_cast<const double*>(g.data.data());
        if (const auto whole = golden.find("grad/" + key); whole != golden.end()) {
          REQUIRE(whole->second.numel() == g.numel());
          for (std::int64_t i = 0; i < g.numel(); ++i)
            CHECK(std::abs(values[i] - whole->second.value(i)) < 1e-12);
          ++compared;
          continue;
        }
        const NpyArray& every = golden.at("grad/" + key + "/every37");
        const NpyArray& moments = golden.at("grad/" + key + "/moments");
        double worst = 0, sum = 0, squares = 0;
        for (std::int64_t i = 0; i < g.numel(); ++i) {
          if (i % 37 == 0) worst = std::max(worst, std::abs(values[i] - every.value(i / 37)));
          sum += values[i];
          squares += values[i] * values[i];
        }
        CHECK(worst < 1e-12);
        CHECK(std::abs(sum - moments.value(0)) < 1e-10);
        CHECK(std::abs(squares - moments.value(1)) < 1e-12 * std::max(1.0, moments.value(1)));
        ++compared;
      }
      CHECK(compared == 8);
    }
}
