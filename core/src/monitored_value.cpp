#include <cmath>

#include "dtnn/error.hpp"
#include "dtnn/scheduler.hpp"

namespace dtnn {

MonitoredValue::MonitoredValue(std::string name, const std::string& mode, const std::string& where)
    : name_(std::move(name)), where_(where) {
  if (mode == "auto")
    mode_ = Mode::automatic;
  else if (mode == "min" || mode == "max")
    mode_ = mode == "max" ? Mode::max : Mode::min;
  else
    throw Error(where + ".mode: expected \"auto\", \"min\" or \"max\", got \"" + mode + "\"");
}

bool MonitoredValue::maximise(const TrainingState& state) const {
  if (mode_ != Mode::automatic) return mode_ == Mode::max;
  return state.maximised.contains(validation() ? name_.substr(4) : name_);
}

double MonitoredValue::read(const TrainingState& state) const {
  auto it = state.logs.find(name_);
  if (it != state.logs.end()) return it->second;
  std::string known;
  for (const auto& [k, v] : state.logs) known += (known.empty() ? "" : ", ") + k;
  throw Error(where_ + ".metric: no value named '" + name_ + "' after epoch " +
              std::to_string(state.epoch + 1) + " (there are: " + known + ")" +
              (validation() ? "; val_ values need dataset.validation_split > 0" : ""));
}

bool ImprovementTracker::observe(const TrainingState& state) {
  last_ = watched_.read(state);
  ++epochs_;
  if (std::isnan(last_)) return false;
  if (best_epoch_ > 0 && !watched_.better(last_, best_, state)) return false;
  best_ = last_;
  best_epoch_ = epochs_;
  return true;
}

std::vector<double> ImprovementTracker::state() const {
  return {static_cast<double>(epochs_), static_cast<double>(best_epoch_), best_};
}

void ImprovementTracker::set_state(std::span<const double> v) {
  if (v.size() != 3) return;
  epochs_ = static_cast<std::int64_t>(v[0]);
  best_epoch_ = static_cast<std::int64_t>(v[1]);
  best_ = v[2];
}

}  // namespace dtnn
