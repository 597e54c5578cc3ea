// Losses by hand: class weights (PyDTNN's --loss-weights) against the weighted mean written out,
// cross_entropy against log_softmax and nll, binary_cross_entropy's weights and eps (--loss-eps),
// weights from the class frequencies, and the experiment key that carries a loss's parameters.
#include <doctest/doctest.h>

#include <cmath>

#include "dtnn/array_dataset.hpp"
#include "dtnn/class_frequencies.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/loss.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

std::shared_ptr<Loss> loss(const std::string& name, const json& params) {
  return test::plugins().create_as<Loss>("loss", name, Params(params, "exp.json: loss"));
}

Tensor rows(std::initializer_list<double> values, std::int64_t n) {
  Tensor t = Tensor::empty(Shape{n, static_cast<std::int64_t>(values.size()) / n}, DType::float64);
  std::copy(values.begin(), values.end(), t.data<double>());
  return t;
}

}  // namespace

TEST_CASE("class weights: the weighted mean over rows, for nll and categorical_cross_entropy") {
  // Two rows of 3 classes; row 0 is class 2 (weight 4), row 1 class 0 (weight 0.5).
  const Tensor p = rows({0.2, 0.3, 0.5, 0.6, 0.3, 0.1}, 2);
  const Tensor t = rows({0, 0, 1, 1, 0, 0}, 2);
  const json weights = {{"weights", {0.5, 1.0, 4.0}}};
  const double expected = -(4.0 * std::log(0.5) + 0.5 * std::log(0.6)) / 4.5;
  CHECK(loss("categorical_cross_entropy", weights)->forward(p, t) == doctest::Approx(expected));
  CHECK(loss("categorical_cross_entropy", json::object())->forward(p, t) ==
        doctest::Approx(-(std::log(0.5) + std::log(0.6)) / 2));

  Tensor logp = rows({0, 0, 0, 0, 0, 0}, 2);
  for (int i = 0; i < 6; ++i) logp.data<double>()[i] = std::log(p.data<double>()[i]);
  CHECK(loss("nll", weights)->forward(logp, t) == doctest::Approx(expected));
  Tensor ids = Tensor::empty(Shape{2}, DType::float64);
  ids.data<double>()[0] = 2;
  ids.data<double>()[1] = 0;
  CHECK(loss("nll", weights)->forward(logp, ids) == doctest::Approx(expected));

  CHECK(test::error_of([&] {
          loss("nll", {{"weights", {1.0, 2.0}}})->forward(logp, ids);
        }) == "nll: 2 class weights for 3 classes: expected one weight per class");
  CHECK(test::error_of([&] {
          loss("nll", {{"weights", {1.0, -2.0, 1.0}}});
        }).find("exp.json: loss.weights: expected a list of non-negative numbers") !=
        std::string::npos);
}

TEST_CASE("a loss refuses targets that fit neither its rows nor class ids, naming itself") {
  const Tensor p = rows({0.2, 0.3, 0.5, 0.6, 0.3, 0.1}, 2);
  const Tensor three = Tensor::zeros(Shape{3}, DType::float64);
  const Tensor ids = Tensor::zeros(Shape{2}, DType::float64);
  // mse and categorical_cross_entropy take targets of the predictions' shape only.
  CHECK(test::error_of([&] { loss("mse", json::object())->forward(p, ids); }) ==
        "mse: targets (2,) for predictions (2, 3): expected targets of the predictions' shape");
  CHECK(test::error_of([&] {
          loss("categorical_cross_entropy", json::object())->forward(p, ids);
        }).find("categorical_cross_entropy: targets (2,)") == 0);
  // nll takes one class id per row too, but not three ids for two rows, nor in backward.
  CHECK(test::error_of([&] { loss("nll", json::object())->forward(p, three); }) ==
        "nll: targets (3,) for predictions (2, 3): expected targets of the predictions' shape or "
        "one class id per row (2)");
  Tensor d = Tensor::empty(p.shape(), DType::float64);
  CHECK(test::error_of([&] {
          loss("nll", json::object())->backward(p, three, d);
        }).find("nll: targets (3,)") == 0);
  // A target that is no class id is named by its row, in forward and in backward.
  Tensor bad = Tensor::zeros(Shape{2}, DType::float64);
  bad.data<double>()[1] = 3;
  CHECK(test::error_of([&] { loss("kl_divergence", json::object())->forward(p, bad); }) ==
        "kl_divergence: target 1 is 3.000000, not a class id in [0, 3) nor the ignored id");
  CHECK(test::error_of([&] {
          loss("cross_entropy", json::object())->backward(p, bad, d);
        }).find("cross_entropy: target 1 is 3") == 0);
}

TEST_CASE("the loss key: a name, or an object with the loss's parameters") {
  json config = json::parse(R"({"model": "simplemlp",
      "dataset": {"name": "synthetic", "train_samples": 64, "test_samples": 32},
      "training": {"epochs": 1, "batch_size": 32, "evaluate": false},
      "output": {"progress": "none"},
      "loss": {"name": "categorical_cross_entropy", "weights": [1, 1, 1, 1, 1, 1, 1, 1, 1, 9]}})");
  Experiment e(make_experiment(config, {}, "exp.json"), test::plugins());
  CHECK(std::isfinite(e.run().epochs.back().loss));
  config["loss"] = {{"name", "categorical_cross_entropy"}, {"weight", {1}}};
  CHECK(test::error_of([&] {
          Experiment x(make_experiment(config, {}, "exp.json"), test::plugins());
        }).find("weight") != std::string::npos);
  config["loss"] = {{"weights", {1}}};
  CHECK(test::error_of([&] { make_experiment(config, {}, "exp.json"); }) ==
        "exp.json: loss: expected a loss name, or {\"name\": ..., parameters...}, got "
        "{\"weights\":[1]}");
}

TEST_CASE("cross_entropy: nll of the log_softmax of logits, one-hot or ids, weighted") {
  const Tensor z = rows({2.0, -1.0, 0.5, 0.1, 3.0, -2.0}, 2);
  const Tensor t = rows({0, 0, 1, 1, 0, 0}, 2);
  const double* zp = z.data<double>();
  auto logp = [&](int r, int j) {
    const double* row = zp + 3 * r;
    return row[j] - std::log(std::exp(row[0]) + std::exp(row[1]) + std::exp(row[2]));
  };
  CHECK(loss("cross_entropy", json::object())->forward(z, t) ==
        doctest::Approx(-(logp(0, 2) + logp(1, 0)) / 2));
  const json weights = {{"weights", {0.5, 1.0, 4.0}}};
  const double weighted = -(4.0 * logp(0, 2) + 0.5 * logp(1, 0)) / 4.5;
  CHECK(loss("cross_entropy", weights)->forward(z, t) == doctest::Approx(weighted));
  Tensor ids = Tensor::empty(Shape{2}, DType::float64);
  ids.data<double>()[0] = 2;
  ids.data<double>()[1] = 0;
  CHECK(loss("cross_entropy", weights)->forward(z, ids) == doctest::Approx(weighted));
  // Large logits: no probability rounds to 0, so the loss stays finite and exact.
  const Tensor big = rows({1000.0, 0.0, -1000.0}, 1), last = rows({0, 0, 1}, 1);
  CHECK(loss("cross_entropy", json::object())->forward(big, last) == doctest::Approx(2000.0));
  // Its gradient is softmax - target over the rows (unweighted).
  Tensor d = Tensor::empty(z.shape(), DType::float64);
  loss("cross_entropy", json::object())->backward(z, t, d);
  CHECK(d.data<double>()[2] == doctest::Approx((std::exp(logp(0, 2)) - 1) / 2));
  CHECK(d.data<double>()[4] == doctest::Approx(std::exp(logp(1, 1)) / 2));
}

TEST_CASE("binary_cross_entropy: column weights and the probability floor (--loss-eps)") {
  const Tensor p = rows({0.9, 0.2, 0.4, 0.7}, 2), t = rows({1, 0, 0, 1}, 2);
  auto term = [](double pi, double ti) {
    return -(ti * std::log(pi) + (1 - ti) * std::log(1 - pi));
  };
  const double plain = (term(0.9, 1) + term(0.2, 0) + term(0.4, 0) + term(0.7, 1)) / 4;
  CHECK(loss("binary_cross_entropy", json::object())->forward(p, t) == doctest::Approx(plain));
  const double weighted =
      (3 * term(0.9, 1) + 0.5 * term(0.2, 0) + 3 * term(0.4, 0) + 0.5 * term(0.7, 1)) / 4;
  CHECK(loss("binary_cross_entropy", {{"weights", {3.0, 0.5}}})->forward(p, t) ==
        doctest::Approx(weighted));
  CHECK(test::error_of([&] {
          loss("binary_cross_entropy", {{"weights", {1.0, 2.0, 3.0}}})->forward(p, t);
        }) == "binary_cross_entropy: 3 class weights for 2 classes: expected one weight per class");
  // A certain wrong answer costs -log(eps): the floor is the loss's "eps".
  const Tensor wrong = rows({0.0}, 1), one = rows({1.0}, 1);
  CHECK(loss("binary_cross_entropy", {{"eps", 1e-3}})->forward(wrong, one) ==
        doctest::Approx(-std::log(1e-3)));
  CHECK(loss("categorical_cross_entropy", {{"eps", 1e-4}})
            ->forward(rows({0.0, 1.0}, 1), rows({1.0, 0.0}, 1)) ==
        doctest::Approx(-std::log(1e-4)));
  CHECK(loss("binary_cross_entropy", json::object())->forward(wrong, one) ==
        doctest::Approx(-std::log(1e-15)));
  CHECK(test::error_of([&] {
          loss("binary_cross_entropy", {{"eps", 0.7}});
        }).find("loss.eps: expected a number in [0, 0.5)") != std::string::npos);
}

namespace {
// Six samples of 3 classes: class 0 four times, class 1 twice, class 2 never.
class SkewedClasses final : public ArrayDataset {
 public:
  SkewedClasses() {
    sample_shape_ = Shape{2};
    classes_ = 3;
    for (Split s : {Split::train, Split::test}) {
      Part& p = part(s);
      for (int i = 0; i < 6; ++i) {
        p.x.insert(p.x.end(), {float(i), 1.0f});
        p.y.insert(p.y.end(), {i < 4 ? 1.0f : 0.0f, i < 4 ? 0.0f : 1.0f, 0.0f});
      }
      p.count = 6;
    }
  }
};
}  // namespace

TEST_CASE("class weights from the training split's frequencies (PyDTNN 3.x's)") {
  const SkewedClasses data;
  const std::vector<std::int64_t> counts =
      training_class_counts(data, DType::float32, Layout::nhwc, 4);
  CHECK(counts == std::vector<std::int64_t>{4, 2, 0});
  const std::vector<double> w = frequency_weights(counts);
  REQUIRE(w.size() == 3);
  CHECK(w[0] == doctest::Approx(6.0 / (3 * 5)));
  CHECK(w[1] == doctest::Approx(6.0 / (3 * 3)));
  CHECK(w[2] == doctest::Approx(6.0 / 3));

  // loss.weights "frequency" in a run: the weights are computed and recorded in the config.
  json config = json::parse(R"({"model": "simplemlp",
      "dataset": {"name": "synthetic", "train_samples": 64, "test_samples": 32},
      "training": {"epochs": 1, "batch_size": 32, "evaluate": false},
      "output": {"progress": "none"},
      "loss": {"name": "categorical_cross_entropy", "weights": "frequency"}})");
  Experiment e(make_experiment(config, {}, "exp.json"), test::plugins());
  const json& recorded = e.config().json["loss"]["weights"];
  REQUIRE(recorded.is_array());
  CHECK(recorded.size() == 10);
  CHECK(std::isfinite(e.run().epochs.back().loss));
}
