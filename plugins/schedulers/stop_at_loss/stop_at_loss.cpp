// stop_at_loss: stops training once `metric` passes `threshold`: rises above it for a maximised
// metric (accuracy), falls below it for a minimised one (a loss) (PyDTNN's StopAtLoss; its
// default threshold 0 stops after the first epoch with any accuracy: set one).
#include <cstdio>

#include "dtnn/log.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class StopAtLoss final : public Scheduler {
 public:
  explicit StopAtLoss(const Params& p)
      : watched_(p.get_string("metric"), p.get_string("mode"), p.where()),
        threshold_(p.get_double("threshold")) {}
  std::string name() const override { return "stop_at_loss"; }

  void on_epoch_end(TrainingState& s) override {
    const double value = watched_.read(s);
    if (!watched_.better(value, threshold_, s)) return;
    s.stop_training = true;
    char line[160];
    std::snprintf(line, sizeof line, "stop_at_loss: %s = %.6g passed %.6g: training stops",
                  watched_.name().c_str(), value, threshold_);
    log_info(line);
  }

 private:
  MonitoredValue watched_;
  double threshold_;
};

Plugin* create(const Params& p, const PluginContext&) { return new StopAtLoss(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "stop_at_loss",
            "stops training when metric passes threshold (PyDTNN's StopAtLoss)",
            R"({"metric": "val_categorical_accuracy", "mode": "auto", "threshold": 0.0})", create)
