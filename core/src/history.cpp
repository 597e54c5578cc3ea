#include <cstdio>
#include <nlohmann/json.hpp>

#include "dtnn/trainer.hpp"
#include "yaml_text.hpp"

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
    if (e.energy) {
      r["energy_j"] = e.energy->joules;
      r["joules_per_sample"] = e.samples > 0 ? e.energy->joules / double(e.samples) : 0.0;
      if (e.energy->nodes > 1) r["energy_nodes_measured"] = e.energy->nodes_measured;
    }
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
  if (seconds_to_first_step > 0) j["seconds_to_first_step"] = seconds_to_first_step;
  j["train_samples"] = train_samples;
  j["ranks"] = ranks;
  if (train_energy) {
    j["train_energy_j"] = train_energy->joules;
    j["train_joules_per_sample"] =
        train_samples > 0 ? train_energy->joules / double(train_samples) : 0.0;
    j["energy_nodes"] = {{"measured", train_energy->nodes_measured}, {"of", train_energy->nodes}};
  }
  if (!energy_source.empty()) j["energy_source"] = energy_source;
  if (!stopped.empty()) j["stopped"] = stopped;
  if (skipped_batches > 0) j["skipped_batches"] = skipped_batches;
  if (loss_scale)
    j["loss_scale"] = {{"final", *loss_scale}, {"overflow_skipped_steps", loss_scale_overflows}};
  for (const auto& p : participation)
    j["participation"].push_back({{"step", p.step}, {"ranks", p.ranks}});
  if (ranks > 1) {
    j["comm_wait_ms_per_step"] = comm_wait_ms_per_step;
    j["buckets"] = buckets;
    j["sent_bytes_per_step"] = sent_bytes_per_step;
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

std::string History::to_pydtnn_yaml(const nlohmann::ordered_json& properties) const {
  // One event a document: what PyDTNN 3.x's history_append writes, under dtnn's names.
  auto event = [&](const char* part, double seconds, double loss,
                   const std::map<std::string, double>& metrics, std::int64_t epoch) {
    nlohmann::ordered_json e = {{"part", part}, {"time", seconds}};
    if (epoch > 0) e["epoch"] = epoch;
    e[loss_name.empty() ? std::string("loss") : loss_name] = loss;
    for (const auto& m : metric_names)
      if (auto it = metrics.find(m); it != metrics.end()) e[m] = it->second;
    return "---\n" + detail::yaml_block(e);
  };
  std::string text = detail::yaml_block(properties);
  if (test_before)
    text += event("test", test_before->seconds, test_before->loss, test_before->metrics, 0);
  for (const auto& e : epochs) {
    text += event("train", e.seconds, e.loss, e.metrics, e.epoch);
    if (e.validation)
      text +=
          event("val", e.validation->seconds, e.validation->loss, e.validation->metrics, e.epoch);
  }
  if (test) text += event("test", test->seconds, test->loss, test->metrics, 0);
  return text;
}

}  // namespace dtnn
