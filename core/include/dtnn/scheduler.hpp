// Scheduler: training callbacks that may change the learning rate, stop training or save
// (PyDTNN's LR schedulers). Every rank runs every scheduler on the same global losses and
// metrics, so all ranks decide alike.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

class Model;
class Optimizer;

// What a callback sees and may change.
struct TrainingState {
  std::int64_t epoch = 0;  // 0-based
  std::int64_t batch = 0;  // within the epoch
  // At on_epoch_end: "loss" (also under the loss's name, "categorical_cross_entropy"), each metric,
  // and the same with "val_" in front when there is a validation set. Global over ranks.
  std::map<std::string, double> logs;
  // The metrics better when higher (their plugins' trait "better": "max"), by the name logs has
  // them under without "val_"; every other value in logs (losses, errors) is better when lower.
  std::set<std::string> maximised;
  Optimizer* optimizer = nullptr;
  Model* model = nullptr;
  int rank = 0, ranks = 1;
  bool stop_training = false;
  // Writes a checkpoint (weights, optimizer, position) named `stem`.dtnn in the checkpoint folder
  // (output.checkpoint_dir, else the working folder), the stem made one plain file name first
  // (safe_file_name: no "/" or leading "."). Rank 0 writes; every rank gets the path.
  std::function<std::string(const std::string& stem)> write_checkpoint;
};

class DTNN_CORE_EXPORT Scheduler : public Plugin {
 public:
  ~Scheduler() override;
  virtual std::string name() const = 0;  // the plugin's name, recorded with its state
  virtual void on_train_begin(TrainingState&) {}
  virtual void on_epoch_begin(TrainingState&) {}
  virtual void on_batch_begin(TrainingState&) {}
  virtual void on_batch_end(TrainingState&) {}
  virtual void on_epoch_end(TrainingState&) {}
  virtual void on_train_end(TrainingState&) {}
  // What a checkpoint must carry to resume this scheduler exactly (counters, best values);
  // set_state gets back what state() returned.
  virtual std::vector<double> state() const { return {}; }
  virtual void set_state(std::span<const double>) {}
};

// The loss or metric a scheduler watches, by PyDTNN's convention: "val_" + name reads the
// validation value, name alone the training value. Mode "auto" maximises the metrics whose plugin
// says "better": "max" (TrainingState::maximised) and minimises the rest; "min" or "max" overrides.
class DTNN_CORE_EXPORT MonitoredValue {
 public:
  // where: the config location for errors ("exp.json: schedulers[1]").
  MonitoredValue(std::string name, const std::string& mode, const std::string& where);
  // The value in state.logs; an Error naming the key and the values there when it is missing.
  double read(const TrainingState& state) const;
  // Whether a higher value is the better one in this run.
  bool maximise(const TrainingState& state) const;
  bool better(double value, double than, const TrainingState& state) const {
    return maximise(state) ? value > than : value < than;
  }
  const std::string& name() const { return name_; }

 private:
  enum class Mode { automatic, min, max };
  bool validation() const { return name_.starts_with("val_"); }  // a validation value
  std::string name_, where_;
  Mode mode_;
};

// A MonitoredValue followed across epochs: the best value so far and the epoch it came in, for
// schedulers that act on improvement or its absence. state() / set_state() carry it through a
// checkpoint.
class DTNN_CORE_EXPORT ImprovementTracker {
 public:
  explicit ImprovementTracker(MonitoredValue watched) : watched_(std::move(watched)) {}
  // Reads the value at the end of this epoch; true when it beats the best so far (the first
  // value that is not NaN does).
  bool observe(const TrainingState& state);
  std::int64_t epochs() const { return epochs_; }
  std::int64_t epochs_since_best() const { return epochs_ - best_epoch_; }
  std::int64_t best_epoch() const { return best_epoch_; }  // 1-based; 0: none yet
  double last() const { return last_; }
  // Counts from now as if the best had just come (reduce_lr_on_plateau waits patience again).
  void restart_wait() { best_epoch_ = epochs_; }
  const MonitoredValue& watched() const { return watched_; }
  std::vector<double> state() const;
  void set_state(std::span<const double> values);

 private:
  MonitoredValue watched_;
  std::int64_t epochs_ = 0, best_epoch_ = 0;
  double best_ = 0, last_ = 0;
};

}  // namespace dtnn
