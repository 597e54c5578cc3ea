// The loss driver of plugin_conformance.hpp.
#include <cmath>
#include <nlohmann/json.hpp>

#include "dtnn/dataset.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/params.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

std::vector<Check> check_loss(const Registry& registry, const PluginRecord& record,
                              const std::string& case_json) {
  const json c = json::parse(case_json);
  const json params = c.value("params", json::object());
  const std::int64_t m = c.value("classes", std::int64_t{4}), rows = 3;
  const std::string setting = "params " + params.dump() + ", " + std::to_string(rows) +
                              " rows of " + std::to_string(m) + ", " +
                              c.value("labels", std::string("one_hot")) + " targets, float64";
  auto loss = registry.create_as<Loss>(
      "loss", record.name, Params(params, "conformance: " + record.name), {}, record.device);
  // Logits, their softmax as the predictions, one-hot targets.
  Tensor z = Tensor::empty(Shape{rows, m}, DType::float64),
         p = Tensor::empty(z.shape(), DType::float64);
  Tensor t = Tensor::zeros(z.shape(), DType::float64);
  fill_uniform(z, 61, -2.0, 2.0);
  auto softmax = [&] {
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (std::int64_t j = 0; j < m; ++j) sum += std::exp(value_at(z, r * m + j));
      for (std::int64_t j = 0; j < m; ++j)
        set_value_at(p, r * m + j, std::exp(value_at(z, r * m + j)) / sum);
    }
  };
  softmax();
  for (std::int64_t r = 0; r < rows; ++r) set_value_at(t, r * m + (r * 5 + 1) % m, 1.0);
  if (c.value("labels", std::string("one_hot")) == "ids") {
    // Class-id targets, one per row, the second row ignored (kIgnoredLabel); the predictions are
    // log-probabilities (a model ending in log_softmax).
    Tensor ids = Tensor::empty(Shape{rows}, DType::float64);
    for (std::int64_t r = 0; r < rows; ++r)
      set_value_at(ids, r, r == 1 ? kIgnoredLabel : double((r * 5 + 1) % m));
    for (std::int64_t i = 0; i < p.numel(); ++i) set_value_at(p, i, std::log(value_at(p, i)));
    t = ids;
  }

  std::vector<Check> out;
  Tensor dp = Tensor::empty(p.shape(), DType::float64);
  loss->forward(p, t);
  loss->backward(p, t, dp);
  const double h = 1e-6;
  double worst = 0;
  for (std::int64_t i = 0; i < p.numel(); ++i) {
    const double old = value_at(p, i);
    set_value_at(p, i, old + h);
    const double up = loss->forward(p, t);
    set_value_at(p, i, old - h);
    const double down = loss->forward(p, t);
    set_value_at(p, i, old);
    const double numeric = (up - down) / (2 * h), analytic = value_at(dp, i);
    worst = std::max(worst, std::abs(numeric - analytic) /
                                std::max(1.0, std::max(std::abs(numeric), std::abs(analytic))));
  }
  out.push_back({"gradient check: dLoss/dpredictions", setting, true, worst < 1e-6,
                 "error " + std::to_string(worst) + " (tolerance 1e-6)"});

  // Through softmax: dz_j = p_j (dp_j - sum_k p_k dp_k).
  if (loss->has_softmax_gradient()) {
    Tensor dz = Tensor::empty(p.shape(), DType::float64);
    loss->backward_through_softmax(p, t, dz);
    double worst_z = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      double dot = 0;
      for (std::int64_t j = 0; j < m; ++j) dot += value_at(p, r * m + j) * value_at(dp, r * m + j);
      for (std::int64_t j = 0; j < m; ++j) {
        const double expected = value_at(p, r * m + j) * (value_at(dp, r * m + j) - dot);
        worst_z = std::max(worst_z, std::abs(expected - value_at(dz, r * m + j)));
      }
    }
    out.push_back(
        {"the combined softmax gradient is the softmax's Jacobian applied to the "
         "plain one",
         setting, true, worst_z < 1e-10, "error " + std::to_string(worst_z)});
  }
  return out;
}

}  // namespace dtnn::testing
