#include "dtnn/run_profile.hpp"

#include <cstdio>
#include <map>

#include "dtnn/layer_trace.hpp"
#include "format.hpp"

namespace dtnn::run_profile {

using nlohmann::json;

namespace {

struct Layer {
  json args;
  double forward = 0, backward = 0, flops = 0;  // seconds, flops of every call
  double forward_joules = 0, backward_joules = 0;
  std::int64_t forward_calls = 0, backward_calls = 0;
};

double seconds_of(const trace::Recorded& r, trace::Phase p) {
  return r.seconds[static_cast<std::size_t>(p)];
}

}  // namespace

json to_json(const trace::Recorded& r, bool energy_measured) {
  // The layers' calls of training steps: those inside an evaluation span are left out.
  std::vector<std::pair<std::int64_t, std::int64_t>> evaluations;
  for (const trace::Event& e : r.events)
    if (e.phase == trace::Phase::evaluation) evaluations.emplace_back(e.begin_ns, e.end_ns);
  auto in_evaluation = [&](const trace::Event& e) {
    for (const auto& [begin, end] : evaluations)
      if (e.begin_ns >= begin && e.end_ns <= end) return true;
    return false;
  };
  std::map<int, Layer> layers;
  for (const trace::Event& e : r.events) {
    if (e.phase != trace::Phase::forward && e.phase != trace::Phase::backward) continue;
    if (in_evaluation(e)) continue;
    const trace::Label& label = r.labels[e.label];
    const json args = json::parse(label.args, nullptr, false);
    if (!args.is_object() || !args.contains("layer")) continue;
    Layer& l = layers[args["layer"].get<int>()];
    if (l.args.is_null()) l.args = args;
    const double s = static_cast<double>(e.end_ns - e.begin_ns) * 1e-9;
    (e.phase == trace::Phase::forward ? l.forward : l.backward) += s;
    (e.phase == trace::Phase::forward ? l.forward_joules : l.backward_joules) += e.joules;
    ++(e.phase == trace::Phase::forward ? l.forward_calls : l.backward_calls);
    l.flops += label.flops;
  }
  const double steps_seconds = seconds_of(r, trace::Phase::step);
  const auto steps = r.calls[static_cast<std::size_t>(trace::Phase::step)];
  json rows = json::array();
  double step_flops = 0;  // the layers' (a block's layers count, the block itself does not)
  for (const auto& [number, l] : layers) {
    if (!l.args.value("block", false)) step_flops += l.flops;
    const double total = l.forward + l.backward;
    json row = {
        {"layer", number},
        {"type", l.args.value("type", "")},
        {"attributes", l.args.value("attributes", "")},
        {"block", l.args.value("block", false)},
        {"forward_ms", l.forward_calls ? 1e3 * l.forward / double(l.forward_calls) : 0.0},
        {"backward_ms", l.backward_calls ? 1e3 * l.backward / double(l.backward_calls) : 0.0},
        {"share_of_steps", steps_seconds > 0 ? total / steps_seconds : 0.0},
        {"gflops", total > 0 && l.flops > 0 ? l.flops / total * 1e-9 : 0.0}};
    if (energy_measured) {
      row["forward_mj"] = l.forward_calls ? 1e3 * l.forward_joules / double(l.forward_calls) : 0.0;
      row["backward_mj"] =
          l.backward_calls ? 1e3 * l.backward_joules / double(l.backward_calls) : 0.0;
    }
    rows.push_back(row);
  }
  auto per_step = [&](trace::Phase p) {
    return steps > 0 ? 1e3 * seconds_of(r, p) / static_cast<double>(steps) : 0.0;
  };
  json profile = {
      {"layers", rows},
      {"steps", steps},
      {"step_ms", per_step(trace::Phase::step)},
      {"gflop_per_step", steps > 0 ? step_flops * 1e-9 / static_cast<double>(steps) : 0.0},
      {"step_gflops", steps_seconds > 0 ? step_flops * 1e-9 / steps_seconds : 0.0},
      {"data_wait_ms", per_step(trace::Phase::data)},
      {"loss_ms", per_step(trace::Phase::loss)},
      {"optimizer_ms", per_step(trace::Phase::optimizer)},
      {"communication_wait_ms", per_step(trace::Phase::comm_wait)},
      {"bookkeeping_sync_ms", per_step(trace::Phase::sync)},
      {"evaluation_s", seconds_of(r, trace::Phase::evaluation)},
      {"checkpoint_s", seconds_of(r, trace::Phase::checkpoint)}};
  if (energy_measured)
    profile["step_j"] = steps > 0 ? r.joules[static_cast<std::size_t>(trace::Phase::step)] /
                                        static_cast<double>(steps)
                                  : 0.0;
  return profile;
}

std::string table(const json& profile) {
  std::vector<std::vector<std::string>> cells;
  const bool energy = profile.contains("step_j");
  cells.push_back({"Layer", "Type", "Attributes", "forward ms", "backward ms", "share", "GFLOP/s"});
  if (energy) cells.back().insert(cells.back().end(), {"forward mJ", "backward mJ"});
  auto fixed = [](double v, const char* format) {
    char b[32];
    std::snprintf(b, sizeof b, format, v);
    return std::string(b);
  };
  for (const json& row : profile["layers"]) {
    char number[16];
    std::snprintf(number, sizeof number, "%03d", row["layer"].get<int>());
    const double gflops = row["gflops"];
    cells.push_back({std::string(number) + (row["block"].get<bool>() ? " (block)" : ""),
                     row["type"], row["attributes"], fixed(row["forward_ms"], "%.4f"),
                     fixed(row["backward_ms"], "%.4f"),
                     fixed(100.0 * row["share_of_steps"].get<double>(), "%.1f%%"),
                     gflops > 0 ? fixed(gflops, "%.1f") : "-"});
    if (energy)
      cells.back().insert(cells.back().end(),
                          {fixed(row["forward_mj"], "%.3f"), fixed(row["backward_mj"], "%.3f")});
  }
  const double step = profile["step_ms"];
  std::string step_energy;
  if (energy) {
    const double batch = profile.value("batch_size", 0.0);
    step_energy = " and " + fixed(profile["step_j"], "%.3f") + " J" +
                  (batch > 0 ? " (" + fixed(1e3 * profile["step_j"].get<double>() / batch, "%.3f") +
                                   " mJ per sample)"
                             : "");
  }
  std::string reports;
  if (profile.contains("energy_source"))
    reports += "Energy: " + profile["energy_source"].get<std::string>() + "\n";
  else if (profile.contains("energy_unavailable"))
    reports += "Energy: not measured (" + profile["energy_unavailable"].get<std::string>() + ")\n";
  if (profile.contains("algorithm_reports"))
    for (const json& line : profile["algorithm_reports"])
      reports += (&line == &profile["algorithm_reports"].front() ? "Algorithms' choices:\n" : "") +
                 line.get<std::string>() + "\n";
  auto part = [&](const char* name, const char* key) {
    const double ms = profile[key];
    return std::string(name) + " " + fixed(ms, "%.3f") + " ms (" +
           fixed(step > 0 ? 100.0 * ms / step : 0.0, "%.1f") + "%)";
  };
  // The step's work: the layers' counted flops (a convolution's as direct convolution's, whatever
  // its algorithm), their rate over the whole step, and that against the measured FP32 peak.
  std::string work;
  if (const double gflop = profile.value("gflop_per_step", 0.0); gflop > 0) {
    const double rate = profile.value("step_gflops", 0.0);
    work = ", " + fixed(gflop, "%.3f") + " GFLOP in the layers at " + fixed(rate, "%.1f") +
           " GFLOP/s over the step";
    if (const double peak = profile.value("fp32_peak_gflops", 0.0); peak > 0)
      work += " (" + fixed(100.0 * rate / peak, "%.0f") + "% of the FP32 peak, " +
              fixed(peak, "%.0f") + " GFLOPS measured)";
  }
  return "Profile: " + std::to_string(profile["steps"].get<std::int64_t>()) +
         " training steps, shares of their time (a block's includes its layers')\n" +
         detail::format_table(cells, {3, 4, 5, 6, 7, 8}) + "Per step: " + fixed(step, "%.3f") +
         " ms" + step_energy + work + "; " + part("waiting for data", "data_wait_ms") + ", " +
         part("loss and metrics", "loss_ms") + ", " + part("optimizer", "optimizer_ms") + ", " +
         part("waiting for communication", "communication_wait_ms") + ", " +
         part("bookkeeping collectives", "bookkeeping_sync_ms") + "\n" + reports;
}

}  // namespace dtnn::run_profile
