// warm_up: raises the learning rate linearly from base_lr to init_lr over the first warmup_epochs
// epochs (PyDTNN's WarmUpLRScheduler). After epoch e (1-based) of the warm-up the rate is
//   base_lr + e / warmup_epochs * (init_lr - base_lr).
// base_lr = 0 means the configured learning rate / ranks, init_lr = 0 the configured learning
// rate, as PyDTNN sets them. Unlike PyDTNN, which trains the first epoch at init_lr, the first
// epoch here runs at base_lr: a warm-up that starts high is not one.
#include <cstdio>

#include "dtnn/log.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class WarmUp final : public Scheduler {
 public:
  explicit WarmUp(const Params& p)
      : epochs_(p.get_int("warmup_epochs")),
        base_lr_(p.get_double("base_lr")),
        init_lr_(p.get_double("init_lr")) {
    if (epochs_ < 1) p.fail("warmup_epochs", "an integer >= 1");
    if (base_lr_ < 0) p.fail("base_lr", "a number >= 0 (0: learning_rate / ranks)");
    if (init_lr_ < 0) p.fail("init_lr", "a number >= 0 (0: learning_rate)");
  }
  std::string name() const override { return "warm_up"; }

  void on_train_begin(TrainingState& s) override {
    if (done_ > 0) return;  // resumed: the rates were fixed by the first run
    if (init_lr_ == 0) init_lr_ = s.optimizer->learning_rate();
    if (base_lr_ == 0) base_lr_ = init_lr_ / s.ranks;
    s.optimizer->set_learning_rate(base_lr_);
  }

  void on_epoch_end(TrainingState& s) override {
    if (done_ >= epochs_) return;
    ++done_;
    const double lr = base_lr_ + static_cast<double>(done_) / epochs_ * (init_lr_ - base_lr_);
    s.optimizer->set_learning_rate(lr);
    char line[96];
    std::snprintf(line, sizeof line, "warm_up: learning rate %.8g", lr);
    log_info(line);
  }

  std::vector<double> state() const override {
    return {static_cast<double>(done_), base_lr_, init_lr_};
  }
  void set_state(std::span<const double> v) override {
    if (v.size() != 3) return;
    done_ = static_cast<std::int64_t>(v[0]);
    base_lr_ = v[1];
    init_lr_ = v[2];
  }

 private:
  std::int64_t epochs_, done_ = 0;
  double base_lr_, init_lr_;
};

Plugin* create(const Params& p, const PluginContext&) { return new WarmUp(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "warm_up",
            "linear learning-rate warm-up from base_lr to init_lr over warmup_epochs (PyDTNN's)",
            R"({"warmup_epochs": 5, "base_lr": 0.0, "init_lr": 0.0})", create)
