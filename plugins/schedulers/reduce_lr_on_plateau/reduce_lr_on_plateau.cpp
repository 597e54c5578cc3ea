// reduce_lr_on_plateau: when `metric` has not improved for `patience` epochs, multiplies the
// learning rate by factor (not below min_lr) and waits another `patience` epochs (PyDTNN's
// ReduceLROnPlateau). The metric convention is MonitoredValue's.
#include <cstdio>

#include "dtnn/log.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class ReduceOnPlateau final : public Scheduler {
 public:
  explicit ReduceOnPlateau(const Params& p)
      : tracker_(MonitoredValue(p.get_string("metric"), p.get_string("mode"), p.where())),
        factor_(p.get_double("factor")),
        min_lr_(p.get_double("min_lr")),
        patience_(p.get_int("patience")) {
    if (factor_ <= 0 || factor_ > 1) p.fail("factor", "a number in (0, 1]");
    if (patience_ < 1) p.fail("patience", "an integer >= 1");
    if (min_lr_ < 0) p.fail("min_lr", "a number >= 0");
  }
  std::string name() const override { return "reduce_lr_on_plateau"; }

  void on_epoch_end(TrainingState& s) override {
    if (tracker_.observe(s)) return;
    const double lr = s.optimizer->learning_rate() * factor_;
    if (tracker_.epochs_since_best() < patience_ || lr < min_lr_) return;
    s.optimizer->set_learning_rate(lr);
    tracker_.restart_wait();
    char line[160];
    std::snprintf(line, sizeof line,
                  "reduce_lr_on_plateau: %s did not improve for %lld epochs: learning rate %.8g",
                  tracker_.watched().name().c_str(), static_cast<long long>(patience_), lr);
    log_info(line);
  }

  std::vector<double> state() const override { return tracker_.state(); }
  void set_state(std::span<const double> v) override { tracker_.set_state(v); }

 private:
  ImprovementTracker tracker_;
  double factor_, min_lr_;
  std::int64_t patience_;
};

Plugin* create(const Params& p, const PluginContext&) { return new ReduceOnPlateau(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "reduce_lr_on_plateau",
            "learning rate x factor when metric has not improved for patience epochs (PyDTNN's)",
            R"({"metric": "val_categorical_cross_entropy", "mode": "auto", "factor": 0.1,
                "patience": 5, "min_lr": 0.0})",
            create)
