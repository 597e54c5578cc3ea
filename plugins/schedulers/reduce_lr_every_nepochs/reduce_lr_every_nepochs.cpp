// reduce_lr_every_nepochs: multiplies the learning rate by factor after every nepochs epochs, as
// long as the result stays >= min_lr (PyDTNN's ReduceLREveryNEpochs).
#include <cstdio>

#include "dtnn/log.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class ReduceEveryN final : public Scheduler {
 public:
  explicit ReduceEveryN(const Params& p)
      : factor_(p.get_double("factor")),
        min_lr_(p.get_double("min_lr")),
        nepochs_(p.get_int("nepochs")) {
    if (factor_ <= 0 || factor_ > 1) p.fail("factor", "a number in (0, 1]");
    if (nepochs_ < 1) p.fail("nepochs", "an integer >= 1");
    if (min_lr_ < 0) p.fail("min_lr", "a number >= 0");
  }
  std::string name() const override { return "reduce_lr_every_nepochs"; }

  void on_epoch_end(TrainingState& s) override {
    ++epochs_;
    const double lr = s.optimizer->learning_rate() * factor_;
    if (epochs_ % nepochs_ != 0 || lr < min_lr_) return;
    s.optimizer->set_learning_rate(lr);
    char line[112];
    std::snprintf(line, sizeof line, "reduce_lr_every_nepochs: learning rate %.8g", lr);
    log_info(line);
  }

  std::vector<double> state() const override { return {static_cast<double>(epochs_)}; }
  void set_state(std::span<const double> v) override {
    if (v.size() == 1) epochs_ = static_cast<std::int64_t>(v[0]);
  }

 private:
  double factor_, min_lr_;
  std::int64_t nepochs_, epochs_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new ReduceEveryN(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "reduce_lr_every_nepochs",
            "learning rate x factor every nepochs epochs, not below min_lr (PyDTNN's)",
            R"({"factor": 0.1, "nepochs": 5, "min_lr": 0.0})", create)
