#include "dtnn/trainer.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>

#include "dtnn/checkpoint.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/device.hpp"
#include "dtnn/epoch_order.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/gradient_sink.hpp"
#include "dtnn/log.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/model.hpp"
#include "dtnn/model_sync.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/progress.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/stop_request.hpp"
#include "dtnn/throughput.hpp"
#include "dtnn/trace.hpp"

namespace dtnn {

namespace {

using Clock = std::chrono::steady_clock;

// Copies each layer's gradients to the host as backward finishes them, then hands them on to the
// sink, whose optimizer update zeroes them.
class GradientCopier final : public GradientListener {
 public:
  GradientCopier(std::span<const Parameter> parameters, std::vector<Tensor>& copies,
                 GradientListener& next)
      : parameters_(parameters), copies_(copies), next_(next) {}
  void gradients_ready(std::size_t first, std::size_t count) override {
    for (std::size_t i = first; i < first + count; ++i) copies_[i].copy_from(parameters_[i].grad);
    next_.gradients_ready(first, count);
  }

 private:
  std::span<const Parameter> parameters_;
  std::vector<Tensor>& copies_;
  GradientListener& next_;
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// What the steps and epochs of one run share.
struct Trainer::Run {
  TrainingState state;          // what the schedulers see and change
  CheckpointPosition position;  // where a checkpoint written now would resume
  std::uint64_t shuffle_seed = 0;
  std::optional<CheckpointFolder> checkpoints;  // rank 0, with output.checkpoint_dir
  bool rank0_checkpoints = false;               // every rank: whether rank 0 has that folder
  std::vector<std::vector<float>> residuals;    // every rank's, at the last gather_residuals
  std::optional<EpochOrder> order;
  std::optional<RankCounts> counts;
  // A step's status summed over ranks: a stop request, a non-finite value, and (ranks may leave)
  // a 1 from each rank still there.
  std::vector<double> status;
  SteadyThroughput throughput;
  std::int64_t global_step = 0, first_global_step = 0;
  Clock::time_point start;
  // This epoch: the training loss summed over its samples, the samples and the seconds (this
  // rank's), and the totals over ranks: the metrics', then the loss sum and the samples.
  double loss_sum = 0, seconds = 0;
  std::int64_t samples = 0;
  std::vector<double> global;
  std::optional<StepEnergy> energy;
};

Trainer::Trainer(Model& model, const Dataset& dataset, Optimizer& optimizer, Loss& loss,
                 std::vector<std::shared_ptr<Metric>> metrics,
                 std::vector<std::shared_ptr<Scheduler>> schedulers, Communicator& comm,
                 TrainerOptions options)
    : model_(model),
      dataset_(dataset),
      optimizer_(optimizer),
      loss_(loss),
      metrics_(std::move(metrics)),
      schedulers_(std::move(schedulers)),
      comm_(comm),
      options_(options) {
  if (options_.eval_batch_size <= 0) options_.eval_batch_size = options_.batch_size;
  const std::int64_t max_batch = model_.options().max_batch;
  if (options_.batch_size > max_batch || options_.eval_batch_size > max_batch)
    throw Error("trainer: batch size above the model's max_batch");
  std::int64_t n = dataset_.size(Split::train);
  if (options_.train_limit > 0) n = std::min(n, options_.train_limit);
  std::int64_t validation =
      static_cast<std::int64_t>(std::floor(static_cast<double>(n) * options_.validation_split));
  train_end_ = n - validation;
  validation_end_ = n;
  test_end_ = dataset_.size(Split::test);
  if (options_.test_limit > 0) test_end_ = std::min(test_end_, options_.test_limit);
  epoch_samples_ = options_.dataset_percentage > 0 && train_end_ > 0
                       ? std::max<std::int64_t>(
                             1, std::llround(double(train_end_) * options_.dataset_percentage))
                       : std::max<std::int64_t>(train_end_, 0);
  std::int64_t trained = epoch_samples_;  // over the ranks that train on it
  if (local_data()) {
    if (options_.global_batch_size > 0)
      throw Error(
          "training.global_batch_size: with per-rank datasets (parallel.shared_data false) "
          "each rank takes training.batch_size samples a step");
    const auto mine = static_cast<double>(epoch_samples_);  // exact below 2^53
    std::vector<double> all(static_cast<std::size_t>(comm_.size()));
    comm_.allgather(&mine, all.data(), 1, DType::float64, "per-rank dataset sizes");
    rank_epoch_samples_.assign(all.begin(), all.end());
    trained =
        std::accumulate(rank_epoch_samples_.begin(), rank_epoch_samples_.end(), std::int64_t{0});
  }
  if (trained <= 0 && options_.epochs > 0 && !options_.evaluate_only)
    throw Error(local_data()
                    ? "dataset: no rank has training samples left after the validation split"
                    : "dataset: no training samples left after the validation split");

  const Layout layout = model_.options().layout;
  const DType dtype = model_.options().dtype;
  x_ = Tensor::empty(dataset_.sample_shape(layout).with_batch(max_batch), dtype, layout);
  y_ = Tensor::empty(dataset_.label_shape().with_batch(max_batch), dtype, layout);
  if (const auto means = static_cast<std::int64_t>(options_.augment.channel_mean.size());
      means > 0) {
    const Shape sample = dataset_.sample_shape(layout);
    const std::int64_t channels =
        sample.rank() == 3 ? sample[layout == Layout::nhwc ? 2 : 0] : sample[sample.rank() - 1];
    if (channels != means)
      throw Error("dataset.normalize_mean: " + std::to_string(means) + " values, but the samples " +
                  sample.str() + " have " + std::to_string(channels) + " channels");
  }
  loader_ = std::make_unique<BatchLoader>(dataset_, options_.augment, max_batch, dtype, layout,
                                          options_.prefetch);
  if (const Device device = model_.options().device; device != Device::cpu) {
    for (int i = 0; i < 2; ++i) {
      x_device_[i] = Tensor::empty(x_.shape(), dtype, layout, device);
      y_device_[i] = Tensor::empty(y_.shape(), dtype, layout, device);
    }
    prediction_host_ = Tensor::empty(model_.output_shape().with_batch(max_batch), dtype, layout);
    pinned_ = loader_->buffers();
    for (const Tensor& t : {x_, y_, prediction_host_}) pinned_.push_back(t);
    DeviceRuntime& runtime = device_runtime(device);
    for (const Tensor& t : pinned_) runtime.pin(t.raw(), t.bytes());
  }
  for (const auto& m : metrics_) {
    if (m->device() != Device::cpu && m->device() != model_.options().device)
      throw Error("trainer: metric '" + m->name() + "' reads " + to_string(m->device()) +
                  " memory, but the model is on " + to_string(model_.options().device));
    m->set_classes(dataset_.num_classes());
    metric_offsets_.push_back(metric_totals_.size());
    metric_totals_.resize(metric_totals_.size() + m->num_totals(), 0.0);
  }
  metric_offsets_.push_back(metric_totals_.size());
  // Gradients are checked where they are host memory; on a device only the loss is (a check there
  // would copy every gradient to the host every step).
  const bool on_host = model_.options().device == Device::cpu;
  NonFinitePolicy gradient_policy = on_host ? options_.on_nonfinite : NonFinitePolicy::ignore;
  if (options_.loss_scale.enabled) {  // an overflow skips the step: all or nothing
    if (!on_host) throw Error("trainer: loss scaling (fp16 products) needs the model on the cpu");
    gradient_policy = NonFinitePolicy::skip_batch;
    loss_scale_ = LossScale(options_.loss_scale);
  }
  local_sink_ = local_gradient_sink(optimizer_, model_.parameters(), gradient_policy);
  if (comm_.size() > 1) {
    const std::int64_t share = batch_plan().rank_max;
    if (share > max_batch)
      throw Error("trainer: a rank's share of the global batch (" + std::to_string(share) +
                  ") is above the model's max_batch (" + std::to_string(max_batch) + ")");
    exchange_ = std::make_unique<GradientExchange>(model_, comm_, options_.sync.exchange);
    exchange_sink_ = exchange_gradient_sink(*exchange_, optimizer_, gradient_policy, on_host);
    const auto& resumed = options_.resumed_residuals;
    if (exchange_->keeps_residuals() && !resumed.empty()) {
      const auto rank = static_cast<std::size_t>(comm_.rank());
      if (resumed.size() != static_cast<std::size_t>(comm_.size()) ||
          resumed[rank].size() != exchange_->residuals().size())
        log_warning("the checkpoint's error-feedback residuals are of " +
                    std::to_string(resumed.size()) + " rank(s) with another bucket layout or " +
                    "rank count than this run's " + std::to_string(comm_.size()) +
                    ": they start at zero");
      else
        exchange_->set_residuals(resumed[rank]);
    }
    const auto& states = options_.resumed_codec_states;
    if (!states.empty()) {
      if (options_.sync.exchange.codec && states.size() <= exchange_->num_buckets())
        exchange_->set_codec_states(states);
      else
        log_warning("the checkpoint's codec state is of " + std::to_string(states.size()) +
                    " bucket(s), of another codec or bucket layout than this run's: it starts "
                    "afresh");
    }
  }
}

Trainer::~Trainer() {
  if (!pinned_.empty()) {
    loader_.reset();  // its thread may still be filling a pinned buffer
    DeviceRuntime& runtime = device_runtime(model_.options().device);
    runtime.synchronize();
    for (const Tensor& t : pinned_) runtime.unpin(t.raw());
  }
}

std::pair<Tensor, Tensor> Trainer::to_model_device(const Tensor& x, const Tensor& y) {
  if (!x_device_[0].defined()) return {x, y};
  const std::int64_t n = x.dim(0);
  const int slot = device_slot_;
  device_slot_ = 1 - device_slot_;
  Tensor xd = x_device_[slot].slice_batch(0, n), yd = y_device_[slot].slice_batch(0, n);
  // The host buffers are refilled only after the loss of this batch has been read back, which
  // waits for these copies.
  device_runtime(xd.device())
      .upload_async({{xd.raw(), x.raw(), x.bytes()}, {yd.raw(), y.raw(), y.bytes()}});
  return {xd, yd};
}

BatchPlan Trainer::batch_plan() const {
  return BatchPlan::of(options_.batch_size, options_.global_batch_size, comm_.size());
}

bool Trainer::local_data() const { return !options_.shared_data && comm_.size() > 1; }

EpochOrder Trainer::epoch_order() const {
  if (local_data())
    return EpochOrder(train_end_, rank_epoch_samples_, options_.batch_size, comm_.rank());
  return EpochOrder(train_end_, epoch_samples_, batch_plan().global, comm_.size());
}

std::int64_t Trainer::steps_per_epoch(const EpochOrder& order) const {
  std::int64_t steps = order.steps();
  if (options_.steps_per_epoch > 0) steps = std::min(steps, options_.steps_per_epoch);
  return steps;
}

// A step reads: the next batch, forward, the loss, backward into the step's gradient sink, and the
// sink's finish: the update, or the exchange with the other ranks and the update. The sinks were
// chosen once (the constructor): with one process the update runs during backward, each layer's
// parameters as soon as their gradients are final (dtnn/gradient_sink.hpp).
double Trainer::train_step(std::span<const std::int64_t> indices, double weight,
                           bool sync_gradients, std::span<const std::int64_t> next) {
  const auto n = static_cast<std::int64_t>(indices.size());
  if (n == 0 && !sync_gradients) return 0.0;
  DTNN_CHECK(!sync_gradients || exchange_sink_, "gradient synchronisation needs several ranks");
  GradientSink& sink = sync_gradients ? *exchange_sink_ : *local_sink_;
  auto [x_host, y_host] = loader_->take(indices, augment_seed_);
  auto [x, y] = to_model_device(x_host, y_host);
  if (!next.empty()) loader_->request(next, augment_seed_);
  double loss = 0;
  if (n > 0) {
    const Tensor& prediction = model_.forward(x, Mode::train);
    const trace::Span span(trace::Phase::loss);
    loss = loss_.forward(prediction, y);
    accumulate_metrics(prediction, y, y_host, metric_totals_);
  }
  const bool loss_finite = options_.on_nonfinite == NonFinitePolicy::ignore || std::isfinite(loss);
  // Under loss scaling backward's gradients are scale times the loss's; the sink divides again.
  const double scale = loss_scale_.value();
  sink.begin(weight / scale, loss_finite);
  if (n == 0)
    sink.contribute_nothing();
  else if (loss_finite || sync_gradients) {  // several ranks: the sums say it to every rank
    GradientCopier copier(model_.parameters(), kept_gradients_, sink);  // for TensorBoard
    model_.backward(loss_, y, keep_gradients_ ? static_cast<GradientListener*>(&copier) : &sink,
                    scale);
  }
  const bool gradients_finite = sink.finish();
  // Scaled, an overflow is the scale's to handle (every rank sees the same sums): only a
  // non-finite loss is on_nonfinite's.
  if (loss_scale_.enabled())
    step_nonfinite_ = !loss_scale_.update(gradients_finite) && !loss_finite;
  else
    step_nonfinite_ = !gradients_finite || !loss_finite;
  if (step_nonfinite_ && options_.on_nonfinite == NonFinitePolicy::stop && n > 0)
    nonfinite_where_ = locate_nonfinite(model_, loss_, x, y);
  return loss;
}

// totals holds every metric's totals at metric_offsets_ (and may hold more after them).
void Trainer::accumulate_metrics(const Tensor& prediction, const Tensor& y_model,
                                 const Tensor& y_host, std::span<double> totals) {
  Tensor on_host;  // the prediction on the host, copied when the first host metric needs it
  for (std::size_t m = 0; m < metrics_.size(); ++m) {
    const std::span<double> mine = totals.subspan(metric_offsets_[m], metrics_[m]->num_totals());
    if (metrics_[m]->device() == prediction.device()) {
      metrics_[m]->accumulate(prediction, y_model, mine);
      continue;
    }
    if (!on_host.defined()) {  // a host metric of a model on a device (checked at construction)
      on_host = prediction_host_.slice_batch(0, prediction.dim(0));
      on_host.copy_from(prediction);
    }
    metrics_[m]->accumulate(on_host, y_host, mine);
  }
}

std::map<std::string, std::vector<std::vector<double>>> Trainer::metric_matrices(
    std::span<const double> totals) const {
  std::map<std::string, std::vector<std::vector<double>>> matrices;
  for (std::size_t m = 0; m < metrics_.size(); ++m) {
    auto rows = metrics_[m]->matrix(totals.subspan(metric_offsets_[m], metrics_[m]->num_totals()));
    if (!rows.empty()) matrices[metrics_[m]->name()] = std::move(rows);
  }
  return matrices;
}

std::map<std::string, double> Trainer::metric_values(std::span<const double> totals) const {
  std::map<std::string, double> values;
  for (std::size_t m = 0; m < metrics_.size(); ++m)
    values[metrics_[m]->name()] =
        metrics_[m]->value(totals.subspan(metric_offsets_[m], metrics_[m]->num_totals()));
  return values;
}

EvalResult Trainer::evaluate(Split split, std::int64_t begin, std::int64_t end) {
  const trace::Span span(trace::Phase::evaluation);
  auto t0 = Clock::now();
  EvalResult r;
  loader_->settle();                                           // its thread reads the dataset too
  std::vector<double> totals(metric_totals_.size() + 2, 0.0);  // metrics..., loss sum, samples
  std::vector<std::int64_t> idx(static_cast<std::size_t>(options_.eval_batch_size));
  // Each rank evaluates its own contiguous share (with per-rank datasets, its whole split); the
  // sums are reduced.
  const std::int64_t count = std::max<std::int64_t>(end - begin, 0);
  const int share = local_data() ? 0 : comm_.rank(), shares = local_data() ? 1 : comm_.size();
  const std::int64_t lo = begin + count * share / shares;
  const std::int64_t hi = begin + count * (share + 1) / shares;
  for (std::int64_t b = lo; b < hi; b += options_.eval_batch_size) {
    const std::int64_t n = std::min(options_.eval_batch_size, hi - b);
    std::iota(idx.begin(), idx.begin() + n, b);
    Tensor x = x_.slice_batch(0, n), y = y_.slice_batch(0, n);
    dataset_.read(split, std::span<const std::int64_t>(idx.data(), static_cast<std::size_t>(n)), x,
                  y);
    normalize(x, options_.augment);
    const auto [xm, ym] = to_model_device(x, y);
    const Tensor& prediction = model_.forward(xm, Mode::eval);
    totals[totals.size() - 2] += loss_.forward(prediction, ym) * static_cast<double>(n);
    totals[totals.size() - 1] += static_cast<double>(n);
    accumulate_metrics(prediction, ym, y, totals);
  }
  comm_.allreduce_sum(totals.data(), totals.size(), DType::float64,
                      split == Split::test ? "test totals" : "validation totals");
  r.samples = static_cast<std::int64_t>(totals.back());
  r.loss = r.samples ? totals[totals.size() - 2] / static_cast<double>(r.samples) : 0.0;
  r.metrics = metric_values(totals);
  r.matrices = metric_matrices(totals);
  r.seconds = seconds_since(t0);
  return r;
}

void Trainer::restore_scheduler_states() {
  const auto& saved = options_.resumed_schedulers;
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    if (i < saved.size() && saved[i].name == schedulers_[i]->name()) {
      schedulers_[i]->set_state(saved[i].values);
    } else if (options_.start.epoch > 0 || options_.start.step > 0) {
      log_warning("scheduler '" + schedulers_[i]->name() + "' (schedulers[" + std::to_string(i) +
                  "]) has no state in the resumed checkpoint: it starts afresh");
    }
  }
}

std::string Trainer::nonfinite_report(std::int64_t epoch, std::int64_t step, std::int64_t steps) {
  // Where each rank found the first non-finite value ("" where its part stayed finite), gathered
  // so that every rank reports the first rank's finding.
  const auto found = allgather_text(comm_, nonfinite_where_, 159, "non-finite report");
  std::string where;
  for (std::size_t r = 0; r < found.size() && where.empty(); ++r)
    if (!found[r].empty())
      where = found[r] + (found.size() > 1 ? " on rank " + std::to_string(r) : "");
  char lr[32];
  std::snprintf(lr, sizeof lr, "%g", optimizer_.learning_rate());
  return "training stopped at epoch " + std::to_string(epoch + 1) + ", batch " +
         std::to_string(step + 1) + " of " + std::to_string(steps) +
         ": the loss or a gradient is not finite (NaN or infinity); the first non-finite value: " +
         (where.empty() ? std::string("not found again when the batch was rerun") : where) +
         "; learning rate " + lr +
         ". Lower the learning rate, or set training.on_nonfinite to \"skip_batch\" to skip such "
         "batches";
}

std::string Trainer::stop_report(int signal, const CheckpointPosition& at, std::int64_t steps,
                                 const std::filesystem::path& checkpoint) const {
  const std::string name = signal == SIGINT ? "SIGINT" : "SIGTERM";
  std::string s = "training stopped by " + name + " after epoch " + std::to_string(at.epoch + 1) +
                  ", batch " + std::to_string(at.step) + " of " + std::to_string(steps) + "; ";
  if (checkpoint.empty()) return s + "no checkpoint written (output.checkpoint_dir is not set)";
  return s + "checkpoint " + checkpoint.string() + " written (go on with --resume " +
         checkpoint.parent_path().string() + ")";
}

History Trainer::fit() {
  History history;
  history.loss_name = loss_.name();
  for (const auto& m : metrics_) history.metric_names.push_back(m->name());
  Progress progress(options_.progress, comm_);
  if ((options_.evaluate || options_.evaluate_only) && test_end_ > 0) {
    history.test_before = evaluate(Split::test, 0, test_end_);
    progress.print("Test before training: " +
                   format_metrics("", history.test_before->loss, history.test_before->metrics) +
                   "\n");
  }
  if (options_.evaluate_only) return history;
  Run run;
  start_run(run);
  for (std::int64_t epoch = options_.start.epoch;
       epoch < options_.epochs && !run.state.stop_training; ++epoch)
    if (!train_epoch(run, epoch, progress, history)) break;
  finish_run(run, progress, history);
  return history;
}

void Trainer::set_callbacks(std::vector<std::shared_ptr<Scheduler>> callbacks) {
  callbacks_ = std::move(callbacks);
}

void Trainer::notify(void (Scheduler::*event)(TrainingState&), TrainingState& state) {
  for (auto& s : schedulers_) ((*s).*event)(state);
  for (auto& c : callbacks_) ((*c).*event)(state);
}

CheckpointInfo Trainer::checkpoint_info(const Run& run) const {
  CheckpointInfo info = checkpoint_info(run.position, run.shuffle_seed);
  info.exchange_residuals = run.residuals;
  return info;
}

CheckpointInfo Trainer::checkpoint_info(const CheckpointPosition& position,
                                        std::uint64_t seed) const {
  CheckpointInfo info;
  info.optimizer = options_.optimizer_name;
  info.seed = seed;
  info.position = position;
  info.learning_rate = optimizer_.learning_rate();
  for (const auto& s : schedulers_) info.schedulers.push_back({s->name(), s->state()});
  if (exchange_) info.exchange_codec_states = exchange_->codec_states();  // the same on every rank
  if (loss_scale_.enabled()) {
    info.loss_scale = loss_scale_.value();
    info.loss_scale_good_steps = loss_scale_.good_steps();
  }
  return info;
}

void Trainer::set_epochs(std::int64_t epochs) {
  if (epochs < 0) throw Error("fit: epochs " + std::to_string(epochs) + ": expected 0 or more");
  options_.epochs = epochs;
}

CheckpointInfo Trainer::current_checkpoint_info() const {
  return finished_ ? *finished_ : checkpoint_info(options_.start, options_.seed);
}

void Trainer::gather_residuals(Run& run) {
  if (!exchange_ || !exchange_->keeps_residuals()) return;
  std::vector<float> mine = exchange_->residuals();
  const std::size_t n = mine.size(), ranks = static_cast<std::size_t>(comm_.size());
  std::vector<float> all(n * ranks);
  comm_.allgather(mine.data(), all.data(), n, DType::float32, "error-feedback residuals");
  run.residuals.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r)
    run.residuals[r].assign(all.begin() + static_cast<std::ptrdiff_t>(r * n),
                            all.begin() + static_cast<std::ptrdiff_t>((r + 1) * n));
}

// Everything a run sets up before its first step: the schedulers' view and their restored state,
// the checkpoint folder, the stop handlers, and with several ranks rank 0's shuffle seed and
// weights for all.
void Trainer::start_run(Run& run) {
  run.state.optimizer = &optimizer_;
  run.state.model = &model_;
  run.state.rank = comm_.rank();
  run.state.ranks = comm_.size();
  run.state.maximised = options_.maximised_metrics;
  // A scheduler's stem may hold a name from a file (the model's): it is made one plain file name
  // here, so that no such name writes, or later deletes, outside the checkpoint folder.
  run.state.write_checkpoint = [this, &run](const std::string& stem) {
    const std::filesystem::path file =
        std::filesystem::path(options_.checkpoint_dir.empty() ? "." : options_.checkpoint_dir) /
        (safe_file_name(stem) + ".dtnn");
    const trace::Span span(trace::Phase::checkpoint);
    gather_residuals(run);
    if (comm_.rank() == 0) {
      std::error_code ec;
      std::filesystem::create_directories(file.parent_path(), ec);
      write_file_atomically(file.string(),
                            encode_checkpoint(model_, &optimizer_, checkpoint_info(run)));
    }
    return file.string();
  };
  run.position = options_.start;
  run.shuffle_seed = options_.seed;
  if (!options_.checkpoint_dir.empty() && comm_.rank() == 0)
    run.checkpoints.emplace(options_.checkpoint_dir, options_.checkpoint_keep,
                            options_.resumed_from, options_.checkpoint_overwrite);
  run.rank0_checkpoints = run.checkpoints.has_value();
  if (exchange_ && exchange_->keeps_residuals()) {  // the others gather residuals when it writes
    double writes = run.rank0_checkpoints ? 1 : 0;
    comm_.broadcast(&writes, 1, DType::float64, 0, "checkpoint folder");
    run.rank0_checkpoints = writes != 0;
  }
  if (!options_.tensorboard_dir.empty() && comm_.rank() == 0) {
    tensorboard_ = std::make_unique<TensorBoardWriter>(options_.tensorboard_dir);
    tensorboard_->graph(model_);
    kept_gradients_.clear();
    for (const Parameter& p : model_.parameters())
      kept_gradients_.push_back(Tensor::zeros(p.grad.shape(), p.grad.dtype(), p.grad.layout()));
  }
  install_stop_handlers();
  restore_scheduler_states();
  notify(&Scheduler::on_train_begin, run.state);
  if (comm_.size() > 1) {
    double halves[2] = {static_cast<double>(run.shuffle_seed >> 32),
                        static_cast<double>(run.shuffle_seed & 0xffffffffu)};
    comm_.broadcast(halves, 2, DType::float64, 0, "shuffle seed");
    run.shuffle_seed =
        (static_cast<std::uint64_t>(halves[0]) << 32) | static_cast<std::uint64_t>(halves[1]);
    if (options_.sync.initial_sync) exchange_->broadcast_weights(0);
  }
  run.order.emplace(epoch_order());
  run.counts.emplace(comm_.size());
  run.status.assign(2 + (options_.sync.ranks_may_leave ? comm_.size() : 0), 0.0);
  run.global.assign(metric_totals_.size() + 2, 0.0);
  run.global_step = run.first_global_step = options_.start.global_step;
  run.energy.emplace(comm_, options_.measure_energy);
  run.start = Clock::now();
}

// Every rank's metric totals, training loss sum and samples of this epoch so far, summed over
// ranks into run.global: what the bar and the epoch record show.
void Trainer::reduce_totals(Run& run) {
  std::copy(metric_totals_.begin(), metric_totals_.end(), run.global.begin());
  run.global[run.global.size() - 2] = run.loss_sum;
  run.global[run.global.size() - 1] = static_cast<double>(run.samples);
  const trace::Span span(trace::Phase::sync);
  comm_.allreduce_sum(run.global.data(), run.global.size(), DType::float64, "training totals");
}

void Trainer::note_departures(Run& run, std::int64_t epoch, std::int64_t step) {
  RankCounts& counts = *run.counts;
  for (std::size_t r = 0; r < counts.left.size(); ++r) {
    if (counts.left[r] || run.status[2 + r] > 0) continue;
    counts.leave(r);
    std::string staying;
    for (std::size_t k = 0; k < counts.left.size(); ++k)
      if (!counts.left[k]) staying += (staying.empty() ? "" : ", ") + std::to_string(k);
    log_warning("rank " + std::to_string(r) + " left the run in epoch " +
                std::to_string(epoch + 1) + ", step " + std::to_string(step + 1) +
                "; training goes on with ranks " + staying);
  }
}

void Trainer::note_participants(History& history, std::int64_t global_step,
                                std::span<const std::int64_t> counts) const {
  if (options_.sync.participation != SyncParticipation::avail2all) return;
  std::vector<int> ranks;
  for (std::size_t r = 0; r < counts.size(); ++r)
    if (counts[r] > 0) ranks.push_back(static_cast<int>(r));
  if (history.participation.empty() || history.participation.back().ranks != ranks)
    history.participation.push_back({global_step, std::move(ranks)});
}

// The epoch's steps, then its record; false when the run stops in it (history.stopped says why).
bool Trainer::train_epoch(Run& run, std::int64_t epoch, Progress& progress, History& history) {
  run.order->begin_epoch(run.shuffle_seed, epoch, options_.shuffle);
  augment_seed_ = Rng::derive(run.shuffle_seed, 2000 + static_cast<std::uint64_t>(epoch));
  std::fill(metric_totals_.begin(), metric_totals_.end(), 0.0);
  run.state.epoch = epoch;
  notify(&Scheduler::on_epoch_begin, run.state);
  run.loss_sum = run.seconds = 0;
  run.samples = 0;
  const std::int64_t steps = steps_per_epoch(*run.order);
  const std::int64_t first_step = epoch == options_.start.epoch ? options_.start.step : 0;
  for (std::int64_t s = first_step; s < steps; ++s)
    if (!run_step(run, epoch, s, progress, history)) return false;
  end_epoch(run, epoch, progress, history);
  return true;
}

// One step of the epoch on every rank: the step, the decisions every rank takes alike (a stop
// request, a non-finite step), model averaging, the counts, and the bar.
bool Trainer::run_step(Run& run, std::int64_t epoch, std::int64_t s, Progress& progress,
                       History& history) {
  const int ranks = comm_.size(), me = comm_.rank();
  const ModelSyncOptions& sync = options_.sync;
  const std::int64_t steps = steps_per_epoch(*run.order);
  RankCounts& counts = *run.counts;
  run.state.batch = s;
  keep_gradients_ = tensorboard_ && s + 1 == steps;  // the epoch's histograms
  notify(&Scheduler::on_batch_begin, run.state);
  for (int r = 0; r < ranks; ++r)
    counts.step[static_cast<std::size_t>(r)] =
        counts.left[static_cast<std::size_t>(r)] ? 0 : run.order->part(s, r).second;
  const std::int64_t n = counts.step[static_cast<std::size_t>(me)];
  const bool sync_gradients =
      ranks > 1 && sync.frequency == 0 && RankCounts::available(counts.step) >= sync.min_available;
  const double weight =
      sync_gradients ? rank_weight(sync.algorithm, sync.participation, counts.step, me) : 1.0;
  // Pipelined: an epoch's last step applies its own sums too, so that the epoch's end (validation,
  // schedulers, checkpoint) sees every gradient.
  if (sync_gradients && s + 1 == steps && options_.sync.exchange.pipeline)
    exchange_->drain_at_next_finish();
  if (run.global_step == run.first_global_step)  // start-up: process start to the first step
    history.seconds_to_first_step = process_age_seconds();
  const auto t0 = Clock::now();
  run.energy->begin_step();
  const trace::Span step_span(trace::Phase::step);
  const double loss =
      train_step(run.order->indices(s, me), weight, sync_gradients,
                 s + 1 < steps ? run.order->indices(s + 1, me) : std::span<const std::int64_t>{});
  // A stop request (SIGINT, SIGTERM), a step whose values were not finite and who is still there,
  // summed over ranks.
  std::vector<double>& status = run.status;
  std::fill(status.begin(), status.end(), 0.0);
  status[0] = stop_requested() != 0 ? 1.0 : 0.0;
  status[1] = step_nonfinite_ ? 1.0 : 0.0;
  if (sync.ranks_may_leave) status[2 + static_cast<std::size_t>(me)] = 1.0;
  if (ranks > 1) {
    const trace::Span span(trace::Phase::sync);
    comm_.allreduce_sum(status.data(), status.size(), DType::float64, "step status");
  }
  if (sync.ranks_may_leave) note_departures(run, epoch, s);
  if (sync_gradients) note_participants(history, run.global_step, counts.step);
  if (status[1] > 0 && options_.on_nonfinite == NonFinitePolicy::stop) {
    history.stopped = nonfinite_report(epoch, s, steps);
    history.exit_code = 1;
    return false;
  }
  const bool skipped = status[1] > 0 && options_.on_nonfinite == NonFinitePolicy::skip_batch;
  history.skipped_batches += skipped;
  counts.add_step();
  if (ranks > 1 && sync.frequency > 0 && (run.global_step + 1) % sync.frequency == 0) {
    if (RankCounts::available(counts.since_sync) >= sync.min_available) {  // model averaging
      note_participants(history, run.global_step, counts.since_sync);
      exchange_->average_weights(
          rank_weight(sync.algorithm, sync.participation, counts.since_sync, me));
    }
    std::fill(counts.since_sync.begin(), counts.since_sync.end(), 0);
  }
  const double dt = seconds_since(t0);
  run.energy->end_step();
  run.seconds += dt;
  run.throughput.add(dt, n, run.global_step++ - run.first_global_step);
  if (!skipped) {  // a skipped batch counts in the metrics, not in the loss
    run.loss_sum += loss * static_cast<double>(n);
    run.samples += n;
  }
  run.position = {epoch, s + 1, run.global_step};
  if (tensorboard_) {
    tensorboard_->scalar("train/batch_loss", loss, run.global_step);
    tensorboard_->scalar("train/learning_rate", optimizer_.learning_rate(), run.global_step);
    if (loss_scale_.enabled())
      tensorboard_->scalar("train/loss_scale", loss_scale_.value(), run.global_step);
  }
  run.state.logs["batch_loss"] = loss;  // this rank's, for callbacks (dtnn.Experiment.fit)
  notify(&Scheduler::on_batch_end, run.state);
  if (status[0] > 0) {  // stopped by a signal: at this batch boundary, on every rank
    if (exchange_) exchange_->drain(optimizer_, NonFinitePolicy::ignore);  // pipelined: in flight
    if (run.rank0_checkpoints) gather_residuals(run);
    history.stopped = stop_report(
        stop_requested(), run.position, steps,
        run.checkpoints ? run.checkpoints->save(model_, optimizer_, checkpoint_info(run))
                        : std::filesystem::path());
    history.exit_code = 128 + (stop_requested() ? stop_requested() : SIGTERM);
    return false;
  }
  // With several ranks the bar's values are reduced every 8 steps (a decision all ranks take
  // alike); alone, whenever the bar is drawn.
  if (progress.bar() && ranks > 1 && (s % 8 == 7 || s + 1 == steps)) reduce_totals(run);
  if (progress.draw_due(s, steps)) {
    if (ranks == 1) reduce_totals(run);
    const double samples = run.global.back(), loss_sum = run.global[run.global.size() - 2];
    progress.draw(epoch, options_.epochs, s, steps, samples, run.order->samples(steps), run.seconds,
                  samples > 0 ? loss_sum / samples : 0.0, metric_values(run.global));
  }
  return true;
}

// The epoch's record over every rank, its validation, what the schedulers see of it, its line,
// and its checkpoint.
void Trainer::end_epoch(Run& run, std::int64_t epoch, Progress& progress, History& history) {
  // Pipelined: sums still in flight (an epoch whose last step synchronised nothing) land now.
  if (exchange_) exchange_->drain(optimizer_, NonFinitePolicy::ignore);
  reduce_totals(run);
  EpochRecord rec;
  rec.epoch = epoch + 1;
  rec.samples = static_cast<std::int64_t>(run.global.back());
  rec.loss =
      rec.samples ? run.global[run.global.size() - 2] / static_cast<double>(rec.samples) : 0.0;
  rec.metrics = metric_values(run.global);
  rec.matrices = metric_matrices(run.global);
  rec.seconds = run.seconds;
  rec.samples_per_second = run.seconds > 0 ? static_cast<double>(rec.samples) / run.seconds : 0.0;
  if (const EpochEnergy e = run.energy->end_epoch(); e.nodes_measured > 0) rec.energy = e;
  if (validation_end_ > train_end_)
    rec.validation = evaluate(Split::train, train_end_, validation_end_);
  else if (options_.test_as_validation)
    rec.validation = evaluate(Split::test, 0, test_end_);
  TrainingState& state = run.state;
  state.logs.clear();
  state.logs["loss"] = state.logs[loss_.name()] = rec.loss;
  for (const auto& [k, v] : rec.metrics) state.logs[k] = v;
  if (rec.validation) {
    state.logs["val_loss"] = state.logs["val_" + loss_.name()] = rec.validation->loss;
    for (const auto& [k, v] : rec.validation->metrics) state.logs["val_" + k] = v;
  }
  std::string metrics = format_metrics("", rec.loss, rec.metrics);
  if (rec.validation)
    metrics += "  " + format_metrics("val_", rec.validation->loss, rec.validation->metrics);
  progress.epoch_line(epoch, options_.epochs, rec.samples, rec.seconds, metrics);
  run.position = {epoch + 1, 0, run.global_step};
  notify(&Scheduler::on_epoch_end, state);
  if (tensorboard_) tensorboard_epoch(rec);
  history.epochs.push_back(std::move(rec));
  if (run.rank0_checkpoints) gather_residuals(run);
  if (run.checkpoints) run.checkpoints->save(model_, optimizer_, checkpoint_info(run));
}

// After the last epoch (or a stop): the final synchronisation of the ranks' weights, the
// schedulers' end, the run's time and throughput, and the test after training.
void Trainer::finish_run(Run& run, Progress& progress, History& history) {
  const int ranks = comm_.size();
  history.train_seconds = seconds_since(run.start);
  for (const auto& e : history.epochs) history.train_samples += e.samples;
  history.ranks = ranks;
  if (!history.stopped.empty()) return;  // every rank alike: no collective is left unmatched
  const ModelSyncOptions& sync = options_.sync;
  if (ranks > 1 && sync.final_sync) {
    if (sync.frequency != 0)  // weights drifted apart: average them
      exchange_->average_weights(
          rank_weight(sync.algorithm, sync.participation, run.counts->trained, comm_.rank()));
    exchange_->broadcast_weights(0);  // and make every rank's bit-identical
  }
  notify(&Scheduler::on_train_end, run.state);
  finished_ = checkpoint_info(run);
  finished_->exchange_residuals.clear();  // this rank's gathered copy may be stale
  history.train_seconds = seconds_since(run.start);
  if (exchange_ && exchange_->stats().steps > 0) {
    history.comm_wait_ms_per_step =
        1e3 * exchange_->stats().wait_seconds / static_cast<double>(exchange_->stats().steps);
    history.buckets = exchange_->num_buckets();
    history.sent_bytes_per_step = static_cast<double>(exchange_->stats().bytes_sent) /
                                  static_cast<double>(exchange_->stats().steps);
  }
  for (const EpochRecord& e : history.epochs) {
    if (!e.energy) continue;
    if (!history.train_energy)
      history.train_energy = EpochEnergy{0, e.energy->nodes_measured, e.energy->nodes};
    history.train_energy->joules += e.energy->joules;
  }
  double rate = run.throughput.samples_per_second();
  comm_.allreduce_sum(&rate, 1, DType::float64, "throughput");  // ranks train at once: rates add
  history.train_samples_per_second = rate;
  if (loss_scale_.enabled()) {
    history.loss_scale = loss_scale_.value();
    history.loss_scale_overflows = loss_scale_.overflows();
  }
  char tail[200];
  std::snprintf(tail, sizeof tail,
                "Training: %lld samples in %.2f s; steady-state throughput %s samples/s\n",
                static_cast<long long>(history.train_samples), history.train_seconds,
                format_rate(rate).c_str());
  progress.print(tail);
  if (history.train_energy && history.train_samples > 0) {
    const EpochEnergy& e = *history.train_energy;
    std::snprintf(tail, sizeof tail, "Energy: %.1f J in the training steps, %.3f mJ per sample",
                  e.joules, 1e3 * e.joules / static_cast<double>(history.train_samples));
    progress.print(std::string(tail) +
                   (e.nodes > 1 ? " (" + std::to_string(e.nodes_measured) + " of " +
                                      std::to_string(e.nodes) + " nodes measured)"
                                : std::string()) +
                   "\n");
  }
  if (options_.evaluate && test_end_ > 0) {
    history.test = evaluate(Split::test, 0, test_end_);
    progress.print("Test after training: " +
                   format_metrics("", history.test->loss, history.test->metrics) + "\n");
    if (tensorboard_) {
      const std::int64_t epochs = static_cast<std::int64_t>(history.epochs.size());
      tensorboard_->scalar("test/loss", history.test->loss, epochs);
      for (const auto& [name, value] : history.test->metrics)
        tensorboard_->scalar("test/" + name, value, epochs);
    }
  }
  if (tensorboard_) tensorboard_->flush();
}

// The epoch's scalars (step: the epoch, from 1) and its histograms, then what is buffered to
// the file, so that TensorBoard shows the run as it goes.
void Trainer::tensorboard_epoch(const EpochRecord& rec) {
  TensorBoardWriter& tb = *tensorboard_;
  tb.scalar("epoch/loss", rec.loss, rec.epoch);
  for (const auto& [name, value] : rec.metrics) tb.scalar("epoch/" + name, value, rec.epoch);
  if (rec.validation) {
    tb.scalar("epoch/val_loss", rec.validation->loss, rec.epoch);
    for (const auto& [name, value] : rec.validation->metrics)
      tb.scalar("epoch/val_" + name, value, rec.epoch);
  }
  tb.scalar("epoch/samples_per_second", rec.samples_per_second, rec.epoch);
  tb.scalar("epoch/learning_rate", optimizer_.learning_rate(), rec.epoch);
  if (rec.energy) tb.scalar("epoch/joules", rec.energy->joules, rec.epoch);
  const std::span<const Parameter> parameters = model_.parameters();
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    tb.histogram("weights/" + parameters[p].name, parameters[p].value, rec.epoch);
    tb.histogram("gradients/" + parameters[p].name, kept_gradients_[p], rec.epoch);
  }
  tb.flush();
}

}  // namespace dtnn
