// Scheduler: training callbacks that may change the learning rate, stop training or save.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

class Optimizer;

// What a callback sees and may change.
struct TrainingState {
  std::int64_t epoch = 0;              // 0-based
  std::int64_t batch = 0;              // within the epoch
  std::map<std::string, double> logs;  // "loss", "val_loss", "categorical_accuracy", ...
  Optimizer* optimizer = nullptr;
  bool stop_training = false;
};

class DTNN_CORE_EXPORT Scheduler : public Plugin {
 public:
  ~Scheduler() override;
  virtual void on_train_begin(TrainingState&) {}
  virtual void on_epoch_begin(TrainingState&) {}
  virtual void on_batch_begin(TrainingState&) {}
  virtual void on_batch_end(TrainingState&) {}
  virtual void on_epoch_end(TrainingState&) {}
  virtual void on_train_end(TrainingState&) {}
};

}  // namespace dtnn
