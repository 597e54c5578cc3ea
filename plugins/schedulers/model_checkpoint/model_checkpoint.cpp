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
      : tracker_(MonitoredValue(p.get_string("metric"), p.get_string("mode"), p.where())),
        save_freq_(p.get_int("save_freq")) {
    if (save_freq_ < 1) p.fail("save_freq", "an integer >= 1 (epochs)");
  }
  std::string name() const override { return "model_checkpoint"; }

  void on_epoch_end(TrainingState& s) override {
    if (!tracker_.observe(s) || tracker_.epochs() % save_freq_ != 0) return;
    const std::string file = s.write_checkpoint("model-" + s.model->name() + "-epoch-" +
                                                std::to_string(tracker_.epochs()));
    char line[96];
    std::snprintf(line, sizeof line, " (%s = %.6g)", tracker_.watched().name().c_str(),
                  tracker_.last());
    log_info("model_checkpoint: saved " + file + line);
    if (s.rank == 0 && !last_file_.empty() && last_file_ != file) {
      std::error_code ec;
      std::filesystem::remove(last_file_, ec);
    }
    last_file_ = file;
  }

  std::vector<double> state() const override { return tracker_.state(); }
  void set_state(std::span<const double> v) override { tracker_.set_state(v); }

 private:
  ImprovementTracker tracker_;
  std::int64_t save_freq_;
  std::string last_file_;
};

Plugin* create(const Params& p, const PluginContext&) { return new ModelCheckpoint(p); }

}  // namespace

DTNN_PLUGIN("scheduler", "model_checkpoint",
            "writes a checkpoint when metric improves, every save_freq epochs (PyDTNN's)",
            R"({"metric": "val_categorical_cross_entropy", "mode": "auto", "save_freq": 2})",
            create)
