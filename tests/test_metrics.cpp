// Metrics and losses against values computed by hand on small batches; totals add up across
// batches (and so across ranks) to the value of the whole.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dtnn/experiment.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/row_rule_metric.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

Tensor matrix(std::int64_t rows, std::int64_t cols, std::vector<double> v,
              DType dtype = DType::float64) {
  Tensor t = Tensor::empty(Shape{rows, cols}, dtype);
  dispatch_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    for (std::size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = T(v[i]);
  });
  return t;
}

double metric(const std::string& name, const Tensor& p, const Tensor& t, json params = {}) {
  auto m = test::plugins().create_as<Metric>(
      "metric", name, Params(params.is_null() ? json::object() : params, "test"));
  std::vector<double> totals(m->num_totals(), 0.0);
  m->accumulate(p, t, totals);
  return m->value(totals);
}

// Three rows, three classes; targets are classes 0, 1, 2.
const std::vector<double> kPred = {0.7, 0.2, 0.1, 0.3, 0.5, 0.2, 0.6, 0.3, 0.1};
const std::vector<double> kTarg = {1, 0, 0, 0, 1, 0, 0, 0, 1};

}  // namespace

TEST_CASE("categorical metrics on a hand-computed batch") {
  for (DType dtype : {DType::float32, DType::float64}) {
    const Tensor p = matrix(3, 3, kPred, dtype), t = matrix(3, 3, kTarg, dtype);
    CHECK(metric("categorical_accuracy", p, t) == doctest::Approx(2.0 / 3));
    // hinge rows: max(0, 0.2 - 0.7 + 1) = 0.5; max(0, 0.3 - 0.5 + 1) = 0.8; 0.6 - 0.1 + 1 = 1.5
    CHECK(metric("categorical_hinge", p, t) == doctest::Approx((0.5 + 0.8 + 1.5) / 3));
    // 1 - p_target: 0.3, 0.5, 0.9
    CHECK(metric("categorical_mse", p, t) == doctest::Approx((0.09 + 0.25 + 0.81) / 3));
    CHECK(metric("categorical_mae", p, t) == doctest::Approx((0.3 + 0.5 + 0.9) / 3));
  }
}

TEST_CASE("regression metrics average over every output") {
  const Tensor p = matrix(2, 2, {1.0, 2.0, 3.0, 5.0}), t = matrix(2, 2, {1.5, 2.0, 2.0, 3.0});
  CHECK(metric("regression_mse", p, t) == doctest::Approx((0.25 + 0 + 1 + 4) / 4.0));
  CHECK(metric("regression_mae", p, t) == doctest::Approx((0.5 + 0 + 1 + 2) / 4.0));
}

TEST_CASE("kl_divergence_metric: PyDTNN 3.x's formula by hand, 0 where p = t") {
  const Tensor p = matrix(2, 2, {0.7, 0.3, 0.5, 0.5}), t = matrix(2, 2, {0.5, 0.5, 0.5, 0.5});
  const double eps = 1e-8;
  auto term = [&](double pj, double tj) {
    return std::abs(pj * std::log(std::abs(pj / (tj + eps) + eps)));
  };
  const double row0 = term(0.7, 0.5) + term(0.3, 0.5), row1 = term(0.5, 0.5) * 2;
  CHECK(row1 < 1e-7);
  CHECK(metric("kl_divergence_metric", p, t) == doctest::Approx((row0 + row1) / 2));
  CHECK(metric("kl_divergence_metric", p, t, {{"eps", 0.1}}) != doctest::Approx((row0 + row1) / 2));
}

TEST_CASE("precision, recall and f1 for a positive class, from summed counts") {
  // Rows predicted as argmax 1, 1, 0, 1, 0 against targets 1, 0, 1, 1, 0:
  // TP = 2 (rows 0, 3), FP = 1 (row 1), FN = 1 (row 2).
  const Tensor p = matrix(5, 2, {0.2, 0.8, 0.4, 0.6, 0.9, 0.1, 0.3, 0.7, 0.6, 0.4});
  const Tensor t = matrix(5, 2, {0, 1, 1, 0, 0, 1, 0, 1, 1, 0});
  CHECK(metric("precision", p, t) == doctest::Approx(2.0 / 3));
  CHECK(metric("recall", p, t) == doctest::Approx(2.0 / 3));
  CHECK(metric("f1_score", p, t) == doctest::Approx(4.0 / 6));
  // Class 0 as the positive one: TP = 1 (row 4), FP = 1 (row 2), FN = 1 (row 1).
  CHECK(metric("precision", p, t, {{"positive_class", 0}}) == doctest::Approx(0.5));
  // One sigmoid output: positive when >= 0.5. Predictions 1, 0, 1 against 1, 1, 0.
  const Tensor p1 = matrix(3, 1, {0.9, 0.2, 0.5}), t1 = matrix(3, 1, {1, 1, 0});
  CHECK(metric("recall", p1, t1) == doctest::Approx(0.5));
  CHECK(metric("precision", p1, t1) == doctest::Approx(0.5));

  // Counts from two halves add up to the whole (what summing over ranks relies on).
  auto f1 = test::plugins().create_as<Metric>("metric", "f1_score", Params());
  std::vector<double> totals(3, 0.0);
  f1->accumulate(p.slice_batch(0, 2), t.slice_batch(0, 2), totals);
  f1->accumulate(p.slice_batch(2, 5), t.slice_batch(2, 5), totals);
  CHECK(f1->value(totals) == doctest::Approx(4.0 / 6));
}

TEST_CASE("binary_cross_entropy: value by hand, gradient by finite differences") {
  auto loss = test::plugins().create_as<Loss>("loss", "binary_cross_entropy", Params());
  Tensor p = matrix(2, 2, {0.9, 0.2, 0.4, 0.7}), t = matrix(2, 2, {1, 0, 0, 1});
  const double expected = -(std::log(0.9) + std::log(0.8) + std::log(0.6) + std::log(0.7)) / 4.0;
  CHECK(loss->forward(p, t) == doctest::Approx(expected).epsilon(1e-12));
  Tensor dy = Tensor::empty(Shape{2, 2}, DType::float64);
  loss->backward(p, t, dy);
  for (std::int64_t i = 0; i < 4; ++i) {
    const double h = 1e-6, keep = p.data<double>()[i];
    p.data<double>()[i] = keep + h;
    const double up = loss->forward(p, t);
    p.data<double>()[i] = keep - h;
    const double down = loss->forward(p, t);
    p.data<double>()[i] = keep;
    CHECK(dy.data<double>()[i] == doctest::Approx((up - down) / (2 * h)).epsilon(1e-6));
  }
  // Saturated predictions stay finite.
  Tensor sure = matrix(1, 2, {1.0, 0.0}), wrong = matrix(1, 2, {0, 1});
  CHECK(std::isfinite(loss->forward(sure, wrong)));
}

TEST_CASE("confusion matrices: counts by hand, summed over batches, in the history") {
  auto multi = test::plugins().create_as<Metric>("metric", "multiclass_confusion_matrix",
                                                 Params(json::object(), "test"));
  multi->set_classes(3);
  REQUIRE(multi->num_totals() == 9);
  std::vector<double> totals(9, 0.0);
  // kPred's argmaxes 0, 1, 0 for targets 0, 1, 2; a second batch of the same adds as much.
  multi->accumulate(matrix(3, 3, kPred), matrix(3, 3, kTarg), totals);
  multi->accumulate(matrix(3, 3, kPred, DType::float32), matrix(3, 3, kTarg, DType::float32),
                    totals);
  CHECK(multi->matrix(totals) == std::vector<std::vector<double>>{{2, 0, 0}, {0, 2, 0}, {2, 0, 0}});
  CHECK(multi->value(totals) == doctest::Approx(4.0 / 6.0));

  auto binary = test::plugins().create_as<Metric>("metric", "binary_confusion_matrix",
                                                  Params(json{{"positive_class", 0}}, "test"));
  std::vector<double> b(binary->num_totals(), 0.0);
  binary->accumulate(matrix(3, 3, kPred), matrix(3, 3, kTarg), b);
  // Class 0 predicted for rows 0 and 2; actual only for row 0: TN 1, FP 1, FN 0, TP 1.
  CHECK(binary->matrix(b) == std::vector<std::vector<double>>{{1, 1}, {0, 1}});
  CHECK(binary->value(b) == doctest::Approx(2.0 / 3.0));

  // In a run: the test set's matrix is in the history and counts every test sample once.
  json config = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 4}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [3], "classes": 4, "train_samples": 40,
                "test_samples": 25},
    "metrics": ["categorical_accuracy", "multiclass_confusion_matrix"],
    "training": {"batch_size": 10, "epochs": 1}, "output": {"progress": "none"}})");
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  const auto& rows = h.test->matrices.at("multiclass_confusion_matrix");
  double sum = 0, trace = 0;
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t p = 0; p < 4; ++p) {
      sum += rows[t][p];
      trace += t == p ? rows[t][p] : 0;
    }
  CHECK(sum == 25);
  CHECK(trace / 25 == doctest::Approx(h.test->metrics.at("categorical_accuracy")));
  CHECK(h.to_json().find("\"multiclass_confusion_matrix_matrix\"") != std::string::npos);
}

TEST_CASE("metric rules: a row adds at most kMaxContributions, inside the totals") {
  // The CUDA twins give each row kMaxContributions slots: a rule that wrote more would overrun
  // them, one outside the totals would be lost. Every built-in metric of one-hot labels is a row
  // rule (so each has a twin), over widths 1 (a sigmoid output), 2 and 5 and rows of every kind of
  // decision. The metrics of class-id labels (a sequence's tokens) read a row's target from
  // another width than its predictions, which a row rule cannot: they have no twin yet.
  const std::set<std::string> of_class_ids = {"perplexity", "token_accuracy"};
  for (const PluginRecord& r : test::plugins().records()) {
    if (r.kind != "metric" || r.status != PluginRecord::Status::ok) continue;
    if (of_class_ids.count(r.name)) continue;
    CAPTURE(r.name);
    auto m = test::plugins().create_as<Metric>("metric", r.name, Params(json::object(), "test"));
    const auto* rows = dynamic_cast<const RowRuleMetricBase*>(m.get());
    REQUIRE(rows != nullptr);
    for (const std::int64_t width : {1, 2, 5}) {
      m->set_classes(width);
      for (int row = 0; row < 20; ++row) {
        std::vector<double> p(static_cast<std::size_t>(width)), t(p.size(), 0.0);
        for (std::size_t j = 0; j < p.size(); ++j) p[j] = 0.5 + 0.5 * std::sin(1.7 * row + 3.1 * j);
        t[static_cast<std::size_t>(row) % t.size()] = width == 1 ? row % 2 : 1.0;
        rules::Contribution out[rules::kMaxContributions + 2];
        for (auto& c : out) c = {-7, -7.0};
        const int n = rows->row(p.data(), t.data(), width, out);
        CHECK(n >= 0);
        CHECK(n <= rules::kMaxContributions);
        CHECK(rows->totals_reached(width) <= static_cast<std::int64_t>(m->num_totals()));
        for (int k = 0; k < n; ++k) {
          CHECK(out[k].index >= 0);
          CHECK(out[k].index < static_cast<std::int64_t>(m->num_totals()));
          CHECK(out[k].index < rows->totals_reached(width));
        }
        for (int k = n; k < rules::kMaxContributions + 2; ++k) CHECK(out[k].index == -7);
      }
    }
  }
}

TEST_CASE("a confusion matrix refuses predictions wider than its classes, by name") {
  auto multi = test::plugins().create_as<Metric>("metric", "multiclass_confusion_matrix",
                                                 Params(json::object(), "test"));
  multi->set_classes(3);
  std::vector<double> totals(multi->num_totals(), 0.0);
  // The first row alone would fit (cell [0][0]); the batch is refused before either is counted.
  const Tensor p = matrix(2, 4, {1, 0, 0, 0, 0, 0, 0, 1}),
               t = matrix(2, 4, {1, 0, 0, 0, 0, 0, 0, 1});
  CHECK_THROWS_WITH_AS(
      multi->accumulate(p, t, totals),
      doctest::Contains("rows of 4 values add to 16 totals, but the metric keeps 9"), Error);
  CHECK(std::all_of(totals.begin(), totals.end(), [](double v) { return v == 0; }));
}

TEST_CASE("a metric's parameters come from its entry in the experiment") {
  json config = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [4], "classes": 3, "train_samples": 30,
                "test_samples": 30},
    "metrics": [{"name": "recall", "positive_class": 0}, {"name": "precision", "positive_class": 2}],
    "training": {"batch_size": 10, "epochs": 0}, "output": {"progress": "none"}})");
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  CHECK(e.run().test->metrics.count("recall") == 1);
  config["metrics"][1]["positive_clas"] = 2;
  const std::string error =
      test::error_of([&] { Experiment bad(make_experiment(config, {}, "test"), test::plugins()); });
  CAPTURE(error);
  CHECK(error.find("metrics[1].positive_clas: unknown parameter of metric 'precision'") !=
        std::string::npos);
}
