// dtnn predict EXP.json --ranks 1,2,4,... [--network latency_us=L,bandwidth_gbps=B]
//              [--profile HISTORY.json] [--steps N] [--output PREDICT.json] [--shared-cores C]
// One rank's step is measured here (or read from a run's profile), and the step of each rank
// count is predicted from it (dtnn/scaling_model.hpp): a table, and JSON for `dtnn plot`.
#include <boost/program_options.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "command_support.hpp"
#include "dtnn/checked.hpp"
#include "dtnn/config.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/model.hpp"
#include "dtnn/network_model.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/scaling_model.hpp"
#include "dtnn/step_cost.hpp"

namespace dtnn_cli {

namespace po = boost::program_options;
using nlohmann::json;

namespace {

std::vector<int> parse_ranks(const std::string& text) {
  std::vector<int> ranks;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto n = dtnn::parse_int64(item);
    if (!n || *n < 1 || *n > 1'000'000)
      throw UsageError("--ranks: '" + item + "': expected rank counts from 1 to 1000000, as 1,2,4");
    ranks.push_back(static_cast<int>(*n));
  }
  if (ranks.empty()) throw UsageError("--ranks: expected rank counts, as 1,2,4");
  return ranks;
}

json point_json(const dtnn::ScalingPoint& p) {
  return {{"ranks", p.ranks},
          {"batch_per_rank", p.batch_per_rank},
          {"buckets", p.buckets},
          {"step_ms", 1e3 * p.step_s},
          {"compute_ms", 1e3 * p.compute_s},
          {"communication_wait_ms", 1e3 * p.comm_wait_s},
          {"samples_per_second", p.samples_per_second},
          {"speedup", p.speedup},
          {"efficiency", p.efficiency}};
}

json cost_json(const dtnn::StepCost& c) {
  json layers = json::array();
  for (const auto& l : c.layers)
    layers.push_back({{"forward_ms", 1e3 * l.forward_s},
                      {"backward_ms", 1e3 * l.backward_s},
                      {"parameter_bytes", l.parameter_bytes},
                      {"optimizer_ms", 1e3 * l.optimizer_s}});
  return {{"batch", c.batch},
          {"data_ms", 1e3 * c.data_s},
          {"loss_ms", 1e3 * c.loss_s},
          {"layers", layers}};
}

}  // namespace

int cmd_predict(const std::vector<std::string>& args) {
  std::string config_file, ranks_text = "1,2,4,8,16,32,64", network_text, profile_file, output;
  std::vector<std::string> sets;
  int steps = 20, warmup = 30, shared_cores = 0;
  Common common;
  po::options_description desc("predict options");
  desc.add_options()("help,h", "show this help")("config", po::value(&config_file),
                                                 "experiment file (the first argument)")(
      "ranks", po::value(&ranks_text), "rank counts to predict, as 1,2,4,8 (default 1 to 64)")(
      "network", po::value(&network_text),
      "latency_us=L,bandwidth_gbps=B (default: the experiment's parallel.simulated_network, "
      "else 5 us and 25 Gb/s)")("profile", po::value(&profile_file),
                                "take the layers' times from this history's profile (dtnn run "
                                "--profile --history FILE.json, maybe made elsewhere)")(
      "steps", po::value(&steps), "steps measured (after --warmup steps)")(
      "warmup", po::value(&warmup), "steps run before measuring (best_of tunes in them)")(
      "output", po::value(&output), "also write the prediction here as JSON (for dtnn plot)")(
      "shared-cores", po::value(&shared_cores),
      "the ranks share this many cores of one machine (a validation run): compute slows by "
      "ceil(ranks x threads / cores)")("set,s", po::value(&sets)->composing(),
                                       "override a config key (repeatable)")(
      "plugin-path", po::value(&common.plugin_path)->composing(), "extra plugin folder");
  const po::variables_map vm = parse_with_config(args, desc);
  if (print_help(vm, desc, "dtnn predict EXP.json --ranks 1,2,4 [options]")) return 0;
  if (config_file.empty()) throw UsageError("dtnn predict: give an experiment file");
  if (steps < 1 || warmup < 0 || shared_cores < 0)
    throw UsageError("--steps must be >= 1, --warmup and --shared-cores >= 0");
  const std::vector<int> ranks = parse_ranks(ranks_text);
  dtnn::ProfileTimes profile;
  if (!profile_file.empty())  // before anything runs: a bad file is refused at once
    profile = dtnn::read_profile(dtnn::read_file(profile_file), profile_file);
  if (!output.empty()) dtnn::check_output_file(output, "--output");
  sets.push_back("output.progress=\"none\"");
  sets.push_back("parallel.communicator=\"local\"");
  dtnn::ExperimentConfig config = dtnn::load_experiment(config_file, sets);
  const json& j = config.json;
  dtnn::ScalingOptions options;
  const json& simulated = j["parallel"]["simulated_network"];
  options.network = {simulated["latency_us"].get<double>(),
                     simulated["bandwidth_gbps"].get<double>()};
  std::string assumed;
  if (!network_text.empty()) {
    options.network = dtnn::parse_network(network_text, "--network");
  } else if (!options.network.active()) {
    options.network = {5, 25};
    assumed = " (assumed; give --network)";
  }
  options.bucket_bytes = j["parallel"]["bucket_size_mb"].get<double>() * (1 << 20);
  options.blocking = j["parallel"]["blocking"].get<bool>();
  options.model_sync_freq = j["parallel"]["model_sync_freq"].get<std::int64_t>();
  options.batch_size = j["training"]["batch_size"].get<std::int64_t>();
  options.global_batch_size = j["training"]["global_batch_size"].get<std::int64_t>();
  options.shared_cores = shared_cores;
  options.threads_per_rank = dtnn::runtime_info().threads;

  dtnn::Registry registry = common.registry();
  dtnn::Experiment experiment(config, registry);
  const dtnn::StepCost cost = profile_file.empty()
                                  ? dtnn::measure_step_cost(experiment, warmup, steps)
                                  : dtnn::step_cost_from_profile(experiment, profile, profile_file);
  const auto points = dtnn::predict_scaling(cost, options, ranks);

  std::printf("dtnn predict: %s, model %s; one rank's step %s at batch %lld (%d threads)\n",
              config_file.c_str(), experiment.model().name().c_str(),
              profile_file.empty() ? "measured here" : ("from " + profile_file).c_str(),
              static_cast<long long>(cost.batch), options.threads_per_rank);
  std::printf("network: %s%s; buckets of %.1f MB%s%s\n", options.network.describe().c_str(),
              assumed.c_str(), options.bucket_bytes / (1 << 20),
              options.blocking ? ", blocking" : "",
              options.model_sync_freq > 0 ? ", model averaging" : "");
  std::printf("%7s %10s %8s %10s %11s %14s %12s %8s %10s\n", "ranks", "batch/rank", "buckets",
              "step ms", "compute ms", "comm wait ms", "samples/s", "speedup", "efficiency");
  for (const auto& p : points)
    std::printf("%7d %10lld %8zu %10.3f %11.3f %14.3f %12.0f %8.2f %9.1f%%\n", p.ranks,
                static_cast<long long>(p.batch_per_rank), p.buckets, 1e3 * p.step_s,
                1e3 * p.compute_s, 1e3 * p.comm_wait_s, p.samples_per_second, p.speedup,
                100 * p.efficiency);
  if (!output.empty()) {
    json out = {{"experiment", config_file},
                {"model", experiment.model().name()},
                {"network",
                 {{"latency_us", options.network.latency_us},
                  {"bandwidth_gbps", options.network.bandwidth_gbps}}},
                {"step_cost", cost_json(cost)},
                {"points", json::array()}};
    for (const auto& p : points) out["points"].push_back(point_json(p));
    dtnn::write_file_atomically(output, out.dump(2) + "\n");
  }
  return 0;
}

}  // namespace dtnn_cli
