// Trainer: the training loop, the same for 1 or N ranks. fit() runs epochs of steps
// (train_epoch, run_step) between start_run and finish_run; a step (train_step) reads: the next
// batch, forward, the loss, backward into a gradient sink (dtnn/gradient_sink.hpp), and the sink's
// update or exchange. Around it: the order of the samples (dtnn/epoch_order.hpp), the ranks'
// counts and synchronisations (dtnn/model_sync.hpp), schedulers, checkpoints, evaluation, the
// history, the throughput (dtnn/throughput.hpp) and what is printed (dtnn/progress.hpp).
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/augmentation.hpp"
#include "dtnn/batch_loader.hpp"
#include "dtnn/batch_plan.hpp"
#include "dtnn/checkpoint.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/epoch_order.hpp"
#include "dtnn/gradient_sink.hpp"
#include "dtnn/loss_scale.hpp"
#include "dtnn/model_sync.hpp"
#include "dtnn/nonfinite.hpp"
#include "dtnn/progress.hpp"
#include "dtnn/step_energy.hpp"
#include "dtnn/tensor.hpp"
#include "dtnn/tensorboard.hpp"

namespace dtnn {

class Model;
class Optimizer;
class Loss;
class Metric;
class Scheduler;
struct TrainingState;
class Communicator;

struct TrainerOptions {
  std::int64_t batch_size = 64;        // per rank
  std::int64_t global_batch_size = 0;  // samples per step over all ranks; 0: batch_size x ranks
  // false: every rank has its own dataset (parallel.shared_data), whose training split it goes
  // through alone, batch_size samples a step (epoch_order.hpp), and whose test split it evaluates.
  bool shared_data = true;
  std::int64_t eval_batch_size = 0;  // 0: batch_size
  std::int64_t epochs = 1;
  std::int64_t steps_per_epoch = 0;  // 0: the whole training split
  double validation_split = 0.0;     // last fraction of the training split
  bool test_as_validation = false;   // validate on the test split after every epoch
  // Samples per epoch as a fraction of the training split (PyDTNN's dataset percentage): 0 off,
  // below 1 a different random part every epoch (undersampling), above 1 the split and more
  // (oversampling, every sample at least floor(fraction) times).
  double dataset_percentage = 0.0;
  AugmentOptions augment;        // training augmentation; normalisation of every split
  bool prefetch = false;         // make the next training batch while the current trains
  std::int64_t train_limit = 0;  // 0: all; else the first N training samples
  std::int64_t test_limit = 0;
  std::uint64_t seed = 1;
  bool shuffle = true;
  bool evaluate = true;  // test set before and after training
  bool evaluate_only = false;
  ProgressStyle progress = ProgressStyle::automatic;
  ModelSyncOptions sync;  // used with more than one rank
  // A checkpoint after every epoch when checkpoint_dir is set (rank 0 writes; the newest
  // checkpoint_keep are kept); optimizer_name is recorded in it.
  std::string checkpoint_dir;
  int checkpoint_keep = 3;
  bool checkpoint_overwrite = false;  // remove checkpoints in checkpoint_dir not this run's
  std::string resumed_from;           // the checkpoint (or folder) resumed, if any
  std::string optimizer_name;
  CheckpointPosition start;  // where a resumed run goes on
  // A non-finite loss or gradient: stop with a message naming where it started, skip the step,
  // or go on. Under MPI the decision is collective: every rank stops or skips the same step.
  NonFinitePolicy on_nonfinite = NonFinitePolicy::stop;
  // fp16 products (training.precision): the loss scaled before backward (dtnn/loss_scale.hpp). A
  // step whose gradients overflowed is skipped whatever on_nonfinite says; a non-finite loss is
  // on_nonfinite's. Host memory only.
  LossScaleOptions loss_scale;
  // Joules of the training steps per epoch (output.energy not "none"), read from the installed
  // meter (dtnn/energy_meter.hpp) over every node of the run (dtnn/step_energy.hpp).
  bool measure_energy = false;
  // TensorBoard event files in this folder (rank 0; dtnn/tensorboard.hpp): per step the batch
  // loss and learning rate, per epoch the loss, metrics, validation, throughput, energy and the
  // histograms of weights and of gradients (rank 0's, of the epoch's last step) under the
  // parameters' names, the graph at the start and the test after training. "" for none.
  std::string tensorboard_dir;
  // The metrics better when higher, for the schedulers (TrainingState::maximised).
  std::set<std::string> maximised_metrics;
  std::vector<SchedulerState> resumed_schedulers;  // their state in the resumed checkpoint
  // The resumed checkpoint's exchange residuals, one per rank (CheckpointInfo).
  std::vector<std::vector<float>> resumed_residuals;
  std::vector<std::vector<float>> resumed_codec_states;  // checkpoint's exchange_codec_states
};

struct EvalResult {
  double loss = 0;
  std::map<std::string, double> metrics;
  std::map<std::string, std::vector<std::vector<double>>> matrices;  // matrix metrics' rows
  std::int64_t samples = 0;
  double seconds = 0;
};

struct EpochRecord {
  std::int64_t epoch = 0;  // 1-based, as printed
  double loss = 0;
  std::map<std::string, double> metrics;
  std::map<std::string, std::vector<std::vector<double>>> matrices;  // matrix metrics' rows
  std::optional<EvalResult> validation;
  std::int64_t samples = 0;
  double seconds = 0;  // training time of the epoch (validation excluded)
  double samples_per_second = 0;
  std::optional<EpochEnergy> energy;  // with options.measure_energy, when a node measured
};

struct DTNN_CORE_EXPORT History {
  std::vector<EpochRecord> epochs;
  std::optional<EvalResult> test_before, test;
  double train_samples_per_second = 0;  // steady state: the first 5 batches of the run excluded
  double train_seconds = 0;
  // From the process's start to its first training step: loading, plugin discovery, the model's
  // build, the dataset's first batch, weights from a checkpoint (0: no step ran).
  double seconds_to_first_step = 0;
  std::int64_t train_samples = 0;
  int ranks = 1;
  // Data parallelism: time a step spent waiting on the gradient exchange (rank 0's view; with
  // blocking exchange, the allreduces themselves) and the number of buckets.
  double comm_wait_ms_per_step = 0;
  std::size_t buckets = 0;
  double sent_bytes_per_step = 0;  // what rank 0 put on the wire (parallel.codec), per step
  // The training steps' joules over the epochs (when measured), and what measured them.
  std::optional<EpochEnergy> train_energy;
  std::string energy_source;
  // The column names of PyDTNN's history: the loss, then the metrics in configured order.
  std::string loss_name;
  std::vector<std::string> metric_names;
  // Why training ended before its last epoch ("" when it did not): a non-finite loss or gradient
  // (training.on_nonfinite "stop"), or SIGINT / SIGTERM. exit_code is what the process returns
  // then: 1 for non-finite values, 128 + the signal's number for a signal.
  std::string stopped;
  int exit_code = 0;
  std::int64_t skipped_batches = 0;  // training.on_nonfinite "skip_batch", over all epochs
  // Loss scaling (fp16): the scale at the end and the steps skipped for overflowed gradients.
  std::optional<double> loss_scale;
  std::int64_t loss_scale_overflows = 0;
  // avail2all: who took part in the synchronisations, an entry where that changed: from global
  // step `step` (0-based) on, the synchronisations counted `ranks`.
  struct Participants {
    std::int64_t step = 0;
    std::vector<int> ranks;
  };
  std::vector<Participants> participation;
  // output.profile: rank 0's profile (dtnn/run_profile.hpp), a JSON object's text ("" when off).
  std::string profile;
  std::string to_json() const;
  // PyDTNN's --history-file text: a line per epoch, the epoch from 0 ("%3d"), then "%20.4f" of
  // the loss and each metric, then of the same on the validation split (0 without validation).
  std::string to_pydtnn_text() const;
  // PyDTNN 3.x's YAML history: a stream of documents, the run's properties first (here the
  // experiment's configuration), then an event a document: {part: train|val|test, time: seconds,
  // epoch, <loss name>: value, <metric>: value, ...}, in the order they happened.
  std::string to_pydtnn_yaml(const nlohmann::ordered_json& properties) const;
};

class DTNN_CORE_EXPORT Trainer {
 public:
  Trainer(Model& model, const Dataset& dataset, Optimizer& optimizer, Loss& loss,
          std::vector<std::shared_ptr<Metric>> metrics,
          std::vector<std::shared_ptr<Scheduler>> schedulers, Communicator& comm,
          TrainerOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  History fit();
  EvalResult evaluate(Split split, std::int64_t begin, std::int64_t end);
  // Callbacks run after the schedulers at each of their events (Python's fit callbacks): they may
  // stop training and change the learning rate as a scheduler does, but they are no part of the
  // experiment, so checkpoints hold no state of them. At on_batch_end, logs["batch_loss"] is this
  // rank's loss of the batch. Replaces the callbacks set before.
  void set_callbacks(std::vector<std::shared_ptr<Scheduler>> callbacks);
  // One training step of this rank on these samples of the training split; returns the batch
  // loss and adds to the metric totals. Allocation-free once the first step has run. With more
  // than one rank and gradient synchronisation, `weight` is this rank's share (rank_weight) and
  // every rank must call it, one without samples with empty indices. `next`, when given, are the
  // samples of the next step: their batch is made in the background while this step trains.
  double train_step(std::span<const std::int64_t> indices, double weight = 1.0,
                    bool sync_gradients = false, std::span<const std::int64_t> next = {});
  // A step's samples over all ranks and on each (dtnn/batch_plan.hpp).
  BatchPlan batch_plan() const;
  bool local_data() const;         // per-rank datasets, with several ranks
  EpochOrder epoch_order() const;  // this run's, before its first epoch begins
  // The steps of an epoch of `order` (the run's), cut to training.steps_per_epoch.
  std::int64_t steps_per_epoch(const EpochOrder& order) const;
  const GradientExchange* exchange() const { return exchange_.get(); }

  std::int64_t train_size() const { return train_end_; }
  std::int64_t validation_size() const { return validation_end_ - train_end_; }
  std::int64_t test_size() const { return test_end_; }
  const TrainerOptions& options() const { return options_; }
  // The epochs fit() trains up to (training.epochs; Python's fit(epochs=...) sets it).
  void set_epochs(std::int64_t epochs);
  // What a checkpoint written now holds besides the tensors: where the last fit() ended (its
  // position, shuffle seed, learning rate, schedulers' state), or before any fit() where it starts.
  // Exchange residuals are not gathered here (a collective): a coded run resumed from it starts
  // them at zero.
  CheckpointInfo current_checkpoint_info() const;

 private:
  struct Run;  // what the steps and epochs of one fit() share
  void start_run(Run& run);
  bool train_epoch(Run& run, std::int64_t epoch, Progress& progress, History& history);
  bool run_step(Run& run, std::int64_t epoch, std::int64_t step, Progress& progress,
                History& history);
  void end_epoch(Run& run, std::int64_t epoch, Progress& progress, History& history);
  // Ranks may leave: the ranks missing from this step's status sum leave the counts, said once.
  void note_departures(Run& run, std::int64_t epoch, std::int64_t step);
  // avail2all: the ranks a synchronisation at global_step counts (those with samples), kept in the
  // history when they differ from the previous synchronisation's.
  void note_participants(History& history, std::int64_t global_step,
                         std::span<const std::int64_t> counts) const;
  void finish_run(Run& run, Progress& progress, History& history);
  void reduce_totals(Run& run);
  CheckpointInfo checkpoint_info(const Run& run) const;
  // The same without a run's residuals: the optimizer's, schedulers', codec's and loss scale's.
  CheckpointInfo checkpoint_info(const CheckpointPosition& position, std::uint64_t seed) const;
  // Every rank's exchange residuals, gathered before a checkpoint is written (collective: every
  // rank calls it where rank 0 may write one) into run's, which checkpoint_info adds.
  void gather_residuals(Run& run);
  void restore_scheduler_states();  // from options_.resumed_schedulers
  // Runs `event` of every scheduler, then of every callback.
  void notify(void (Scheduler::*event)(TrainingState&), TrainingState& state);
  // History::stopped's text for a non-finite step (collective: every rank calls it) and for a
  // stop request (after the checkpoint, if any, was written).
  std::string nonfinite_report(std::int64_t epoch, std::int64_t step, std::int64_t steps);
  std::string stop_report(int signal, const CheckpointPosition& at, std::int64_t steps,
                          const std::filesystem::path& checkpoint) const;
  // Each metric reads the prediction where it is (a device metric plugin) or a host copy of it
  // (made once per batch, when a metric needs it). y_model: the targets beside the prediction;
  // y_host: the host's.
  void accumulate_metrics(const Tensor& prediction, const Tensor& y_model, const Tensor& y_host,
                          std::span<double> totals);
  // The batch (host tensors) where the model runs: views of the next x_device_ / y_device_ pair
  // on a device, their copies started.
  std::pair<Tensor, Tensor> to_model_device(const Tensor& x, const Tensor& y);
  std::map<std::string, double> metric_values(std::span<const double> totals) const;
  std::map<std::string, std::vector<std::vector<double>>> metric_matrices(
      std::span<const double> totals) const;

  Model& model_;
  const Dataset& dataset_;
  Optimizer& optimizer_;
  Loss& loss_;
  std::vector<std::shared_ptr<Metric>> metrics_;
  std::vector<std::shared_ptr<Scheduler>> schedulers_;
  std::vector<std::shared_ptr<Scheduler>> callbacks_;  // set_callbacks's: not checkpointed
  Communicator& comm_;
  TrainerOptions options_;
  std::int64_t train_end_ = 0, validation_end_ = 0, test_end_ = 0;
  std::int64_t epoch_samples_ = 0;                // training samples an epoch goes through
  std::vector<std::int64_t> rank_epoch_samples_;  // every rank's, with per-rank datasets
  std::uint64_t augment_seed_ = 0;       // this epoch's: a function of the shuffle seed and epoch
  std::unique_ptr<BatchLoader> loader_;  // training batches
  Tensor x_, y_;                         // [max_batch, ...] evaluation batch buffers
  // A model on a device: two batch buffers there, alternating so that a batch's copy overlaps
  // the previous batch's compute, and the prediction copied back for the metrics.
  Tensor x_device_[2], y_device_[2], prediction_host_;
  int device_slot_ = 0;
  std::vector<Tensor> pinned_;                  // host buffers page-locked for asynchronous copies
  std::unique_ptr<GradientExchange> exchange_;  // with more than one rank
  // Where a step's gradients go (chosen once): this process's update, or the exchange.
  std::unique_ptr<GradientSink> local_sink_, exchange_sink_;
  // The last train_step's verdict (training.on_nonfinite) and, under "stop", where it started.
  bool step_nonfinite_ = false;
  LossScale loss_scale_{LossScaleOptions{}};
  std::string nonfinite_where_;
  std::vector<double> metric_totals_;  // concatenated totals of every metric
  std::vector<std::size_t> metric_offsets_;
  // TensorBoard (options_.tensorboard_dir, rank 0): the writer, and the host copies of the
  // gradients of a step train_step was asked to keep them of.
  std::unique_ptr<TensorBoardWriter> tensorboard_;
  std::optional<CheckpointInfo> finished_;  // checkpoint_info at the end of the last fit()
  std::vector<Tensor> kept_gradients_;
  bool keep_gradients_ = false;
  void tensorboard_epoch(const EpochRecord& record);
};

}  // namespace dtnn
