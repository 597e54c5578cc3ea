// model_checkpoint: when `metric` improves on an epoch whose number is a multiple of save_freq,
// writes a checkpoint model-<model>-epoch-<n>.dtnn (weights, optimizer and position: a run
// resumes from it with --resume FILE) into output.checkpoint_dir (else the working folder) and
// removes the one it wrote before (PyDTNN's ModelCheckpoint, which writes .npz weights).
#include <cstdio>
#include <filesystem>

#include "dtnn/log.hpp"
#include "dtnn/model.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/scheduler.hpp"

namespace {

using namespace dtnn;

class ModelCheckpoint final : public Scheduler {
 public:
  explicit ModelCheckpoint(const Params& p)
      : watched_(p.get_string("metric"), p.get_string("mode"), p.where()),
        save_freq_(p.get_int("save_freq")),
        best_(watched_.worst()) {
    if (save_freq_ < 1) p.fail("save_freq", "an integer >= 1 (epochs)");
  }
  std::string name() const override { return "model_checkpoint"; }

  void on_epoch_end(TrainingState& s) override {
    const double value = watched_.read(s);
    ++epochs_;
    if (!watched_.better(value, best_)) return;
    best_ = value;
    if (epochs_ % save_freq_ != 0) return;
    const std::string file =
        s.write_checkpoint("model-" + s.model->name() + "-epoch-" + std::to_string(epochs_));
    char line[96];
    std::snprintf(line, sizeof line, " (%s = %.6g)", watched_.name().c_str(), value);
    log_info("model_checkpoint: saved " + file + line);
    if (s.rank == 0 && !last_file_.empty() && last_file_ != file) {
      std::error_code ec;
      std::filesystem::remove(last_file_, ec);
    }
    last_file_ = file;
  }

  std::vector<double> state() const override { return {static_cast<double>(epochs_), best_}; }
  void set_state(std::span<const double> v) override {
    if (v.size() != 2) return;
    epochs_ = static_cast<std::int64_t>(v[0]);
    best_ = v[1];
  }

 private:
  MonitoredValue watched_;
  std::int64_t save_freq_, epochs_ = 0;
  double best_;
  std::string last_file_;
};

Plugin* create(const Params& p, const PluginContext&) { return new ModelCheckpoint(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "model_checkpoint",
            "writes a checkpoint when metric improves, every save_freq epochs (PyDTNN's)",
            R"({"metric": "val_categorical_cross_entropy", "mode": "auto", "save_freq": 2})",
            create)
