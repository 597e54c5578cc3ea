#include <cstdio>
#include <nlohmann/json.hpp>

#include "dtnn/trainer.hpp"

namespace dtnn {

namespace {
nlohmann::json eval_json(const EvalResult& r) {
  nlohmann::json j = {{"loss", r.loss}, {"samples", r.samples}, {"seconds", r.seconds}};
  for (const auto& [k, v] : r.metrics) j[k] = v;
  for (const auto& [k, rows] : r.matrices) j[k + "_matrix"] = rows;
  return j;
}
}  // namespace

std::string History::to_json() const {
  nlohmann::json j;
  j["epochs"] = nlohmann::json::array();
  for (const auto& e : epochs) {
    nlohmann::json r = {{"epoch", e.epoch},
                        {"loss", e.loss},
                        {"samples", e.samples},
                        {"seconds", e.seconds},
                        {"samples_per_second", e.samples_per_second}};
    for (const auto& [k, v] : e.metrics) r[k] = v;
    for (const auto& [k, rows] : e.matrices) r[k + "_matrix"] = rows;
    if (e.validation) {
      r["val_loss"] = e.validation->loss;
      for (const auto& [k, v] : e.validation->metrics) r["val_" + k] = v;
    }
    j["epochs"].push_back(r);
  }
  if (test_before) j["test_before"] = eval_json(*test_before);
  if (test) j["test"] = eval_json(*test);
  j["train_samples_per_second"] = train_samples_per_second;
  j["train_seconds"] = train_seconds;
  j["train_samples"] = train_samples;
  j["ranks"] = ranks;
  if (!stopped.empty()) j["stopped"] = stopped;
  if (skipped_batches > 0) j["skipped_batches"] = skipped_batches;
  if (ranks > 1) {
    j["comm_wait_ms_per_step"] = comm_wait_ms_per_step;
    j["buckets"] = buckets;
  }
  if (!profile.empty()) j["profile"] = nlohmann::json::parse(profile);
  return j.dump(2) + "\n";
}

std::string History::to_pydtnn_text() const {
  std::string text;
  char field[64];
  auto put = [&](double v) {
    std::snprintf(field, sizeof field, " %20.4f", v);
    text += field;
  };
  for (const auto& e : epochs) {
    std::snprintf(field, sizeof field, "%3lld", static_cast<long long>(e.epoch - 1));
    text += field;
    put(e.loss);
    for (const auto& m : metric_names) put(e.metrics.at(m));
    put(e.validation ? e.validation->loss : 0.0);
    for (const auto& m : metric_names) put(e.validation ? e.validation->metrics.at(m) : 0.0);
    text += "\n";
  }
  return text;
}

}  // namespace dtnn
