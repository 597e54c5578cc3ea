// The scheduler driver of plugin_conformance.hpp.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

// What one scheduler decided after an epoch: the learning rate, whether to stop, the checkpoints
// it asked for.
struct Decision {
  double learning_rate;
  bool stop;
  std::vector<std::string> checkpoints;
  bool operator==(const Decision&) const = default;
};

// The epoch's logs: a loss that falls, stalls and rises again, accuracies that rise and stall,
// under the names schedulers watch (training and validation).
std::map<std::string, double> logs_of(std::int64_t epoch) {
  const double e = static_cast<double>(epoch);
  const double loss = epoch < 4 ? 2.0 - 0.4 * e : epoch < 8 ? 0.4 : 0.4 + 0.05 * (e - 7);
  const double accuracy = std::min(0.9, 0.3 + 0.15 * e);
  std::map<std::string, double> logs;
  for (const std::string prefix : {"", "val_"}) {
    logs[prefix + "loss"] = loss + (prefix.empty() ? 0.0 : 0.1);
    logs[prefix + "categorical_cross_entropy"] = logs[prefix + "loss"];
    logs[prefix + "categorical_accuracy"] = accuracy - (prefix.empty() ? 0.0 : 0.05);
  }
  return logs;
}

// One scheduler driven through epochs [from, to) as the trainer drives it, on its own optimizer
// and a small model.
class Run {
 public:
  Run(const Registry& registry, const PluginRecord& record, const json& params)
      : model_(
            parse_model_spec(json::parse(R"({"layers": [{"type": "fc", "units": 2}]})"),
                             "conformance"),
            [] {
              ModelOptions o;
              o.max_batch = 1;
              return o;
            }(),
            Shape{3}, registry) {
    optimizer_ = registry.create_as<Optimizer>(
        "optimizer", "sgd", Params(json{{"learning_rate", 0.1}}, "conformance: optimizer"), {});
    optimizer_->build(model_.parameters());
    scheduler_ = registry.create_as<Scheduler>("scheduler", record.name,
                                               Params(params, "conformance: " + record.name), {});
    state_.optimizer = optimizer_.get();
    state_.model = &model_;
    state_.write_checkpoint = [this](const std::string& stem) {
      written_.push_back(stem);
      return stem + ".dtnn";  // nothing is written: the driver records the request
    };
  }

  Scheduler& scheduler() { return *scheduler_; }
  Optimizer& optimizer() { return *optimizer_; }

  std::vector<Decision> epochs(std::int64_t from, std::int64_t to, std::int64_t steps) {
    std::vector<Decision> out;
    scheduler_->on_train_begin(state_);
    for (std::int64_t e = from; e < to && !state_.stop_training; ++e) {
      state_.epoch = e;
      state_.logs.clear();
      scheduler_->on_epoch_begin(state_);
      for (std::int64_t b = 0; b < steps; ++b) {
        state_.batch = b;
        scheduler_->on_batch_begin(state_);
        state_.logs["batch_loss"] = logs_of(e)["loss"];
        scheduler_->on_batch_end(state_);
      }
      state_.logs = logs_of(e);
      scheduler_->on_epoch_end(state_);
      out.push_back({optimizer_->learning_rate(), state_.stop_training, written_});
      written_.clear();
    }
    return out;
  }

 private:
  Model model_;
  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<Scheduler> scheduler_;
  TrainingState state_;
  std::vector<std::string> written_;
};

}  // namespace

std::vector<Check> check_scheduler(const Registry& registry, const PluginRecord& record,
                                   const std::string& case_json) {
  const json c = json::parse(case_json);
  const json params = c.value("params", json::object());
  const std::int64_t epochs = c.value("epochs", std::int64_t{20}), steps = 3;
  std::vector<Check> out;
  for (std::int64_t stop_at = 1; stop_at < epochs; stop_at += 4) {
    const std::string setting = "params " + params.dump() + ", " + std::to_string(epochs) +
                                " epochs of " + std::to_string(steps) + " steps, resumed after " +
                                std::to_string(stop_at);
    // Straight through, against: up to stop_at, then a fresh scheduler and optimizer given the
    // first's state and learning rate (what a checkpoint carries), on to the end.
    Run straight(registry, record, params);
    const std::vector<Decision> all = straight.epochs(0, epochs, steps);
    Run first(registry, record, params);
    std::vector<Decision> resumed = first.epochs(0, stop_at, steps);
    const std::vector<double> state = first.scheduler().state();
    const bool finite =
        std::all_of(state.begin(), state.end(), [](double v) { return !std::isnan(v); });
    out.push_back(
        {"state() holds no NaN", setting, true, finite, std::to_string(state.size()) + " values"});
    if (!resumed.empty() && !resumed.back().stop) {  // it did not stop before
      Run second(registry, record, params);
      second.scheduler().set_state(state);
      second.optimizer().set_learning_rate(first.optimizer().learning_rate());
      for (const Decision& d : second.epochs(stop_at, epochs, steps)) resumed.push_back(d);
    }
    bool same = resumed.size() == all.size();
    std::string where;
    for (std::size_t e = 0; same && e < all.size(); ++e)
      if (!(resumed[e] == all[e])) {
        same = false;
        where = "epoch " + std::to_string(e) + ": learning rate " +
                std::to_string(resumed[e].learning_rate) + " against " +
                std::to_string(all[e].learning_rate) + ", stop " + std::to_string(resumed[e].stop) +
                " against " + std::to_string(all[e].stop);
      }
    out.push_back(
        {"a scheduler restored from state() decides as the one never stopped", setting, true, same,
         same ? std::to_string(all.size()) + " epochs alike"
         : where.empty()
             ? std::to_string(resumed.size()) + " epochs against " + std::to_string(all.size())
             : where});
  }
  return out;
}

}  // namespace dtnn::testing
