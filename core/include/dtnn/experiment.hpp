// Experiment: turns a validated configuration into model + dataset + optimizer + loss + metrics
// + communicator + trainer through the registry, and runs it.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/config.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/energy_meter.hpp"
#include "dtnn/model.hpp"
#include "dtnn/trainer.hpp"

namespace dtnn {

class Registry;
class Model;
class Dataset;
class Optimizer;
class Loss;
class Metric;
class Scheduler;
class Codec;
class Communicator;
class DeviceCommunicator;

class DTNN_CORE_EXPORT Experiment {
 public:
  // dataset: one made by the caller (the Python module's numpy arrays) instead of the plugin
  // dataset.name names; dataset.name then only labels it ("arrays" when empty), and the
  // dataset section's own keys (validation split, augmentation, limits) still apply.
  Experiment(const ExperimentConfig& config, const Registry& registry,
             std::shared_ptr<Dataset> dataset = nullptr);
  ~Experiment();

  Model& model() { return *model_; }
  // The model file's layers as the model was built from them ("$classes" and the other sizes
  // substituted; before fusions): what an exporter reads the architecture from.
  const ModelSpec& model_spec() const { return model_spec_; }
  Trainer& trainer() { return *trainer_; }
  // The experiment as it runs: every key, and the plugins it left unnamed filled in.
  const ExperimentConfig& config() const { return config_; }
  const Dataset& dataset() const { return *dataset_; }
  Optimizer& optimizer() { return *optimizer_; }
  Loss& loss() { return *loss_; }
  std::string summary() const;  // model table and parameter listing
  int rank() const;             // this process's rank (0 alone)
  // Checks the output paths, prints the summary, trains, writes output.history if set (also when
  // training stopped early: History::stopped), and the weights of a run that ended normally. Each
  // output is written whatever became of the others; one Error names every one that failed.
  History run();
  // A checkpoint of the experiment now (weights, layer and optimizer state, shuffle seed, where the
  // last run ended, schedulers' state), which training.resume goes on from; rank 0 writes it.
  void save_checkpoint(const std::filesystem::path& file);

 private:
  void open_device_and_ranks(const Registry& registry, Device device);
  ModelOptions open_dataset(const Registry& registry, Device device);
  void check_batch_fits(std::int64_t max_batch, DType dtype, Layout layout) const;
  void build_model(const Registry& registry, ModelOptions options);
  std::optional<CheckpointInfo> open_optimizer(const Registry& registry, Device device);
  void scale_learning_rate();
  std::vector<std::pair<std::string, std::string>> data_facts(
      const std::optional<CheckpointInfo>& resumed) const;
  void open_loss_and_metrics(const Registry& registry, Device device);
  // fit with output.trace and output.profile; the trace is written through attempt, which
  // collects a failure instead of throwing it.
  History traced(const std::function<History()>& fit,
                 const std::function<void(const std::function<void()>&)>& attempt);
  // Every file the run writes at its end (history, weights, trace) can be written: checked before
  // the first step, so that a bad path does not cost a whole training run.
  void check_outputs() const;

  ExperimentConfig config_;
  std::shared_ptr<Dataset> dataset_;
  std::unique_ptr<Model> model_;
  ModelSpec model_spec_;
  std::shared_ptr<Optimizer> optimizer_;
  std::shared_ptr<Loss> loss_;
  std::vector<std::shared_ptr<Metric>> metrics_;
  std::vector<std::shared_ptr<Scheduler>> schedulers_;
  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<Codec> codec_;                     // parallel.codec (null: "none")
  std::shared_ptr<DeviceCommunicator> device_comm_;  // NCCL, with several GPU ranks
  std::unique_ptr<Trainer> trainer_;
  // output.energy's meter (null: none), installed while run() runs, or why there is none.
  std::unique_ptr<EnergyMeter> energy_meter_;
  std::string energy_unavailable_;
};

// The communicator `name` names ("auto": mpi when an MPI launcher started this process, else
// local) with its parameters (parallel.communicator's object less its name); `where` prefixes
// errors.
DTNN_CORE_EXPORT std::shared_ptr<Communicator> open_communicator(
    const std::string& name, const Registry& registry, const std::string& where,
    const nlohmann::json& parameters = nlohmann::json::object());

}  // namespace dtnn
