// early_stopping: stops training when `metric` has not improved for `patience` epochs and puts
// back the weights of the best epoch (PyDTNN's EarlyStopping). The best weights are kept in
// memory, one copy per rank (ranks hold the same weights when gradients are averaged; with
// model averaging each rank restores its own best). A resumed run has no copy until the metric
// improves again; stopping before that keeps the current weights and says so.

#include "dtnn/log.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class EarlyStopping final : public Scheduler {
 public:
  explicit EarlyStopping(const Params& p)
      : tracker_(MonitoredValue(p.get_string("metric"), p.get_string("mode"), p.where())),
        patience_(p.get_int("patience")),
        restore_(p.get_bool("restore_best_weights")) {
    if (patience_ < 1) p.fail("patience", "an integer >= 1");
  }
  std::string name() const override { return "early_stopping"; }

  void on_epoch_end(TrainingState& s) override {
    if (tracker_.observe(s)) {
      if (restore_) keep(s.model->parameters());
      return;
    }
    if (tracker_.epochs_since_best() < patience_) return;
    s.stop_training = true;
    std::string text = "early_stopping: " + tracker_.watched().name() + " did not improve for " +
                       std::to_string(patience_) + " epochs: training stops";
    if (restore_ && best_weights_.empty()) {
      text += " (no best weights held since the resume: keeping these)";
    } else if (restore_) {
      put_back(s.model->parameters());
      text += ", the weights of epoch " + std::to_string(tracker_.best_epoch()) + " restored";
    }
    log_info(text);
  }

  std::vector<double> state() const override { return tracker_.state(); }
  void set_state(std::span<const double> v) override { tracker_.set_state(v); }

 private:
  void keep(std::span<const Parameter> params) {
    if (best_weights_.size() != params.size()) best_weights_ = zeros_like(params);
    for (std::size_t i = 0; i < params.size(); ++i) best_weights_[i].copy_from(params[i].value);
  }
  void put_back(std::span<const Parameter> params) {
    for (std::size_t i = 0; i < params.size(); ++i) {
      Tensor value = params[i].value;  // a handle on the model's storage
      value.copy_from(best_weights_[i]);
    }
  }

  ImprovementTracker tracker_;
  std::int64_t patience_;
  bool restore_;
  std::vector<Tensor> best_weights_;
};

Plugin* create(const Params& p, const PluginContext&) { return new EarlyStopping(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "early_stopping",
            "stops when metric has not improved for patience epochs; restores the best weights "
            "(PyDTNN's)",
            R"({"metric": "val_categorical_cross_entropy", "mode": "auto", "patience": 10,
                "restore_best_weights": true})",
            create)
