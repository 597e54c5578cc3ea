// Losses by hand: class weights (PyDTNN's --loss-weights) against the weighted mean written out,
// and the experiment key that carries a loss's parameters.
#include <doctest/doctest.h>

#include <cmath>

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
