#include "dtnn/trainer.hpp"

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>

#include "dtnn/checkpoint.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/gradient_exchange.hpp"
#include "dtnn/log.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/model.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/scheduler.hpp"
#include "dtnn/stop_request.hpp"
#include "format.hpp"

namespace dtnn {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWarmupBatches = 5;  // excluded from steady-state throughput

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string fmt_rate(double v) {
  return detail::group_thousands(static_cast<std::int64_t>(v + 0.5));
}

std::string fmt_metrics(const std::string& prefix, double loss,
                        const std::map<std::string, double>& m) {
  char b[64];
  std::snprintf(b, sizeof b, "%sloss %.4f", prefix.c_str(), loss);
  std::string s = b;
  for (const auto& [k, v] : m) {
    std::snprintf(b, sizeof b, "  %s%s %.4f", prefix.c_str(), k.c_str(), v);
    s += b;
  }
  return s;
}

}  // namespace

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
  if (train_end_ <= 0 && options_.epochs > 0 && !options_.evaluate_only)
    throw Error("dataset: no training samples left after the validation split");
  epoch_samples_ = options_.dataset_percentage > 0
                       ? std::max<std::int64_t>(1, std::llround(double(train_end_) *
                                                               options_.dataset_percentage))
                       : train_end_;

  const Layout layout = model_.options().layout;
  const DType dtype = model_.options().dtype;
  x_ = Tensor::empty(dataset_.sample_shape(layout).with_batch(max_batch), dtype, layout);
  y_ = Tensor::empty(Shape{max_batch, dataset_.num_classes()}, dtype, layout);
  if (const auto means = static_cast<std::int64_t>(options_.augment.channel_mean.size()); means > 0) {
    const Shape sample = dataset_.sample_shape(layout);
    const std::int64_t channels = sample.rank() == 3 ? sample[layout == Layout::nhwc ? 2 : 0] : sample[sample.rank() - 1];
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
  if (comm_.size() > 1) {
    const std::int64_t share = (global_batch() + comm_.size() - 1) / comm_.size();
    if (share > max_batch)
      throw Error("trainer: a rank's share of the global batch (" + std::to_string(share) +
                  ") is above the model's max_batch (" + std::to_string(max_batch) + ")");
    exchange_ = std::make_unique<GradientExchange>(model_, comm_, options_.sync.exchange);
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
  device_runtime(xd.device()).upload_async({{xd.raw(), x.raw(), x.bytes()},
                                            {yd.raw(), y.raw(), y.bytes()}});
  return {xd, yd};
}

std::int64_t Trainer::global_batch() const {
  return options_.global_batch_size > 0 ? options_.global_batch_size
                                        : options_.batch_size * comm_.size();
}

std::int64_t Trainer::steps_per_epoch() const {
  const std::int64_t g = global_batch();
  std::int64_t steps = (epoch_samples_ + g - 1) / g;
  if (options_.steps_per_epoch > 0) steps = std::min(steps, options_.steps_per_epoch);
  return steps;
}

void Trainer::print(const std::string& line) const {
  if (comm_.rank() != 0 || options_.progress == ProgressStyle::none) return;
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

namespace {
// Runs the optimizer's update on parameters whose gradients backward has just finished, while
// those gradients and the weights (backward's dx read them) are still in cache. Checking (the
// "stop" policy), it updates nothing from the first non-finite gradient on: those gradients are
// zeroed instead, and found() says so.
class UpdateWhenReady final : public GradientListener {
 public:
  UpdateWhenReady(Optimizer& optimizer, std::span<const Parameter> parameters, bool check)
      : optimizer_(optimizer), parameters_(parameters), check_(check) {}
  void gradients_ready(std::size_t first, std::size_t count) override {
    for (std::size_t i = first; i < first + count && check_ && !found_; ++i)
      found_ = !all_finite(parameters_[i].grad);
    for (std::size_t i = first; i < first + count; ++i) {
      if (found_)
        Tensor(parameters_[i].grad).fill_zero();  // a handle on the same storage
      else
        optimizer_.update(i, parameters_[i]);
    }
  }
  bool found() const { return found_; }

 private:
  Optimizer& optimizer_;
  std::span<const Parameter> parameters_;
  bool check_, found_ = false;
};
}  // namespace

double Trainer::train_step(std::span<const std::int64_t> indices, double weight,
                           bool sync_gradients, std::span<const std::int64_t> next) {
  const auto n = static_cast<std::int64_t>(indices.size());
  const NonFinitePolicy policy = options_.on_nonfinite;
  double batch_loss = 0;
  step_nonfinite_ = false;
  auto [x_host, y_host] = loader_->take(indices, augment_seed_);
  auto [x, y] = to_model_device(x_host, y_host);
  if (!next.empty()) loader_->request(next, augment_seed_);
  if (n > 0) {
    const Tensor& prediction = model_.forward(x, Mode::train);
    batch_loss = loss_.forward(prediction, y);
    accumulate_metrics(prediction, y, y_host, metric_totals_);
  }
  const bool loss_finite = policy == NonFinitePolicy::ignore || std::isfinite(batch_loss);
  // Gradients are checked where they are host memory; on a device only the loss is (a check there
  // would copy every gradient to the host every step).
  const bool on_host = model_.options().device == Device::cpu;
  const NonFinitePolicy gradient_policy = on_host ? policy : NonFinitePolicy::ignore;
  // Grads start at zero: the model builds them so, and each optimizer update leaves them so.
  if (!sync_gradients) {
    if (n == 0) return 0.0;
    if (!loss_finite) {  // no backward: parameters and gradients stay as they are
      step_nonfinite_ = true;
    } else if (gradient_policy == NonFinitePolicy::skip_batch) {  // all or nothing
      model_.backward(loss_, y);
      const auto params = model_.parameters();
      step_nonfinite_ = !std::all_of(params.begin(), params.end(),
                                     [](const Parameter& p) { return all_finite(p.grad); });
      if (step_nonfinite_) {
        model_.zero_grad();
      } else {
        optimizer_.begin_step();
        for (std::size_t i = 0; i < params.size(); ++i) optimizer_.update(i, params[i]);
      }
    } else {  // update each layer as soon as its gradients are final
      optimizer_.begin_step();
      UpdateWhenReady update{optimizer_, model_.parameters(),
                             gradient_policy == NonFinitePolicy::stop};
      model_.backward(loss_, y, &update);
      step_nonfinite_ = update.found();
    }
  } else {
    DTNN_CHECK(exchange_, "gradient synchronisation needs more than one rank");
    // A rank whose loss is not finite sends NaN gradients: every rank's sums are then NaN, and
    // every rank decides alike in finish(). On a device, where sums are not checked, it sends
    // nothing instead (and fit's step status stops or skips every rank after the step).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    exchange_->begin(loss_finite ? weight : on_host ? nan : 0.0);
    if (n > 0)
      model_.backward(loss_, y, exchange_.get());
    else
      exchange_->contribute_nothing();
    step_nonfinite_ = !exchange_->finish(optimizer_, gradient_policy) || !loss_finite;
  }
  if (step_nonfinite_ && policy == NonFinitePolicy::stop && n > 0)
    nonfinite_where_ = locate_nonfinite(model_, loss_, x, y);
  return batch_loss;
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
  auto t0 = Clock::now();
  EvalResult r;
  loader_->settle();  // its thread reads the dataset too
  std::vector<double> totals(metric_totals_.size() + 2, 0.0);  // metrics..., loss sum, samples
  std::vector<std::int64_t> idx(static_cast<std::size_t>(options_.eval_batch_size));
  // Each rank evaluates its own contiguous share; the sums are reduced.
  const std::int64_t count = std::max<std::int64_t>(end - begin, 0);
  const std::int64_t lo = begin + count * comm_.rank() / comm_.size();
  const std::int64_t hi = begin + count * (comm_.rank() + 1) / comm_.size();
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
    if (!found[r].empty()) where = found[r] + (found.size() > 1 ? " on rank " + std::to_string(r) : "");
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
  if (checkpoint.empty())
    return s + "no checkpoint written (output.checkpoint_dir is not set)";
  return s + "checkpoint " + checkpoint.string() + " written (go on with --resume " +
         checkpoint.parent_path().string() + ")";
}

History Trainer::fit() {
  History history;
  history.loss_name = loss_.name();
  for (const auto& m : metrics_) history.metric_names.push_back(m->name());
  // Rank 0's choice for every rank: with several ranks the bar takes a collective, so ranks whose
  // stdout differs (a terminal on one, a pipe on another) must still decide alike.
  double bar_on_rank0 = options_.progress == ProgressStyle::automatic
                            ? (isatty(STDOUT_FILENO) ? 1.0 : 0.0)
                            : (options_.progress == ProgressStyle::bar ? 1.0 : 0.0);
  comm_.broadcast(&bar_on_rank0, 1, DType::float64, 0, "progress style");
  const ProgressStyle style = bar_on_rank0 != 0                               ? ProgressStyle::bar
                              : options_.progress == ProgressStyle::automatic ? ProgressStyle::lines
                                                                              : options_.progress;
  if ((options_.evaluate || options_.evaluate_only) && test_end_ > 0) {
    history.test_before = evaluate(Split::test, 0, test_end_);
    print("Test before training: " +
          fmt_metrics("", history.test_before->loss, history.test_before->metrics) + "\n");
  }
  if (options_.evaluate_only) return history;

  TrainingState state;
  state.optimizer = &optimizer_;
  state.model = &model_;
  state.rank = comm_.rank();
  state.ranks = comm_.size();
  CheckpointPosition position = options_.start;  // kept current through the loop
  std::uint64_t shuffle_seed = options_.seed;
  // Everything a checkpoint records besides tensors, as of now.
  auto checkpoint_info = [&] {
    CheckpointInfo info;
    info.optimizer = options_.optimizer_name;
    info.seed = shuffle_seed;
    info.position = position;
    info.learning_rate = optimizer_.learning_rate();
    for (const auto& s : schedulers_) info.schedulers.push_back({s->name(), s->state()});
    return info;
  };
  state.write_checkpoint = [&](const std::string& stem) {
    const std::filesystem::path file =
        std::filesystem::path(options_.checkpoint_dir.empty() ? "." : options_.checkpoint_dir) /
        (stem + ".dtnn");
    if (comm_.rank() == 0) {
      std::error_code ec;
      std::filesystem::create_directories(file.parent_path(), ec);
      write_file_atomically(file.string(),
                            encode_checkpoint(model_, &optimizer_, checkpoint_info()));
    }
    return file.string();
  };
  std::optional<CheckpointFolder> checkpoints;
  if (!options_.checkpoint_dir.empty() && comm_.rank() == 0)
    checkpoints.emplace(options_.checkpoint_dir, options_.checkpoint_keep, options_.resumed_from,
                        options_.checkpoint_overwrite);
  install_stop_handlers();
  restore_scheduler_states();
  for (auto& s : schedulers_) s->on_train_begin(state);

  // Data parallelism: every rank shuffles with rank 0's seed, so all hold the same order; each
  // step's global batch is cut into contiguous per-rank parts that differ by at most one sample.
  const int ranks = comm_.size(), me = comm_.rank();
  const ModelSyncOptions& sync = options_.sync;
  if (ranks > 1) {
    double halves[2] = {static_cast<double>(shuffle_seed >> 32),
                        static_cast<double>(shuffle_seed & 0xffffffffu)};
    comm_.broadcast(halves, 2, DType::float64, 0, "shuffle seed");
    shuffle_seed =
        (static_cast<std::uint64_t>(halves[0]) << 32) | static_cast<std::uint64_t>(halves[1]);
    if (sync.initial_sync) exchange_->broadcast_weights(0);
  }
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks)),
      since_sync(static_cast<std::size_t>(ranks), 0), trained(static_cast<std::size_t>(ranks), 0);
  auto available = [](const std::vector<std::int64_t>& c) {
    return static_cast<std::int64_t>(
        std::count_if(c.begin(), c.end(), [](auto v) { return v > 0; }));
  };
  // Metric totals, loss sum and sample count of this epoch so far, summed over ranks: what the
  // bar and the epoch record show.
  std::vector<double> global(metric_totals_.size() + 2, 0.0);
  auto reduce_totals = [&](double loss_sum, std::int64_t samples) {
    std::copy(metric_totals_.begin(), metric_totals_.end(), global.begin());
    global[global.size() - 2] = loss_sum;
    global[global.size() - 1] = static_cast<double>(samples);
    comm_.allreduce_sum(global.data(), global.size(), DType::float64, "training totals");
  };

  std::vector<std::int64_t> shuffled(static_cast<std::size_t>(train_end_));
  std::vector<std::int64_t> order(static_cast<std::size_t>(epoch_samples_));
  const std::int64_t batch = global_batch();
  const std::int64_t steps = steps_per_epoch();
  std::int64_t global_step = options_.start.global_step, steady_samples = 0;
  const std::int64_t first_global_step = global_step;
  double steady_seconds = 0;
  auto run_start = Clock::now();

  // Rank r's part of step s's global batch, {first position in order, count}: the batch cut
  // into contiguous parts that differ by at most one sample.
  auto part = [&](std::int64_t step, int r) {
    const std::int64_t b0 = step * batch, global_n = std::min(batch, epoch_samples_ - b0);
    return std::pair{b0 + global_n * r / ranks,
                     global_n * (r + 1) / ranks - global_n * r / ranks};
  };
  auto my_indices = [&](std::int64_t step) {
    const auto [lo, n] = part(step, me);
    return std::span<const std::int64_t>(order).subspan(static_cast<std::size_t>(lo),
                                                        static_cast<std::size_t>(n));
  };

  for (std::int64_t epoch = options_.start.epoch; epoch < options_.epochs && !state.stop_training;
       ++epoch) {
    std::iota(shuffled.begin(), shuffled.end(), 0);
    if (options_.shuffle)
      Rng(Rng::derive(shuffle_seed, 1000 + static_cast<std::uint64_t>(epoch)))
          .shuffle(std::span(shuffled));
    // The epoch's samples: the shuffled split, cut short or gone through again (percentage).
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = shuffled[k % shuffled.size()];
    augment_seed_ = Rng::derive(shuffle_seed, 2000 + static_cast<std::uint64_t>(epoch));
    std::fill(metric_totals_.begin(), metric_totals_.end(), 0.0);
    state.epoch = epoch;
    for (auto& s : schedulers_) s->on_epoch_begin(state);
    double loss_sum = 0, train_seconds = 0;
    std::int64_t samples = 0;
    auto last_print = Clock::now();
    const std::int64_t first_step = epoch == options_.start.epoch ? options_.start.step : 0;
    for (std::int64_t s = first_step; s < steps; ++s) {
      state.batch = s;
      for (auto& sc : schedulers_) sc->on_batch_begin(state);
      for (int r = 0; r < ranks; ++r) counts[static_cast<std::size_t>(r)] = part(s, r).second;
      const std::int64_t n = counts[static_cast<std::size_t>(me)];
      const bool sync_gradients =
          ranks > 1 && sync.frequency == 0 && available(counts) >= sync.min_available;
      const double weight =
          sync_gradients ? rank_weight(sync.algorithm, sync.participation, counts, me) : 1.0;
      auto t0 = Clock::now();
      const double l = train_step(my_indices(s), weight, sync_gradients,
                                  s + 1 < steps ? my_indices(s + 1) : std::span<const std::int64_t>{});
      // What every rank must decide alike: a stop request (SIGINT, SIGTERM) and a step whose
      // values were not finite (on_nonfinite), summed over ranks.
      double status[2] = {stop_requested() != 0 ? 1.0 : 0.0, step_nonfinite_ ? 1.0 : 0.0};
      if (ranks > 1) comm_.allreduce_sum(status, 2, DType::float64, "step status");
      const bool skipped = status[1] > 0 && options_.on_nonfinite == NonFinitePolicy::skip_batch;
      if (status[1] > 0 && options_.on_nonfinite == NonFinitePolicy::stop) {
        history.stopped = nonfinite_report(epoch, s, steps);
        history.exit_code = 1;
        break;
      }
      history.skipped_batches += skipped;
      for (int r = 0; r < ranks; ++r) {
        since_sync[static_cast<std::size_t>(r)] += counts[static_cast<std::size_t>(r)];
        trained[static_cast<std::size_t>(r)] += counts[static_cast<std::size_t>(r)];
      }
      if (ranks > 1 && sync.frequency > 0 && (global_step + 1) % sync.frequency == 0) {
        if (available(since_sync) >= sync.min_available)  // model averaging
          exchange_->average_weights(
              rank_weight(sync.algorithm, sync.participation, since_sync, me));
        std::fill(since_sync.begin(), since_sync.end(), 0);
      }
      const double dt = seconds_since(t0);
      train_seconds += dt;
      if (global_step++ - first_global_step >= kWarmupBatches) {
        steady_seconds += dt;
        steady_samples += n;
      }
      if (!skipped) {  // a skipped batch counts in the metrics, not in the loss
        loss_sum += l * static_cast<double>(n);
        samples += n;
      }
      position = {epoch, s + 1, global_step};
      for (auto& sc : schedulers_) sc->on_batch_end(state);
      if (status[0] > 0) {  // stopped by a signal: at this batch boundary, on every rank
        history.stopped = stop_report(stop_requested(), position, steps,
                                      checkpoints ? checkpoints->save(model_, optimizer_, checkpoint_info())
                                                  : std::filesystem::path());
        history.exit_code = 128 + (stop_requested() ? stop_requested() : SIGTERM);
        break;
      }
      // With several ranks the bar's values are reduced every 8 steps (a decision all ranks take
      // alike); alone, whenever the bar is drawn.
      if (style == ProgressStyle::bar && ranks > 1 && (s % 8 == 7 || s + 1 == steps))
        reduce_totals(loss_sum, samples);
      if (style == ProgressStyle::bar && (seconds_since(last_print) > 0.2 || s + 1 == steps)) {
        if (ranks == 1) reduce_totals(loss_sum, samples);
        last_print = Clock::now();
        const int width = 30;
        const int done = static_cast<int>(width * (s + 1) / steps);
        char head[96];
        std::snprintf(head, sizeof head, "\rEpoch %lld/%lld [", static_cast<long long>(epoch + 1),
                      static_cast<long long>(options_.epochs));
        const double bar_loss = global[global.size() - 2], bar_samples = global.back();
        print(
            std::string(head) + std::string(static_cast<std::size_t>(done), '=') +
            std::string(static_cast<std::size_t>(width - done), ' ') + "] " +
            std::to_string(static_cast<std::int64_t>(bar_samples)) + "/" +
            std::to_string(std::min(epoch_samples_, steps * batch)) + "  " +
            fmt_rate(bar_samples / train_seconds) + " samples/s  " +
            fmt_metrics("", bar_samples > 0 ? bar_loss / bar_samples : 0.0, metric_values(global)) +
            "\033[K");
      }
    }
    if (!history.stopped.empty()) break;  // every rank alike: no collective is left unmatched
    reduce_totals(loss_sum, samples);
    EpochRecord rec;
    rec.epoch = epoch + 1;
    rec.samples = static_cast<std::int64_t>(global.back());
    rec.loss = rec.samples ? global[global.size() - 2] / static_cast<double>(rec.samples) : 0.0;
    rec.metrics = metric_values(global);
    rec.matrices = metric_matrices(global);
    rec.seconds = train_seconds;
    rec.samples_per_second =
        train_seconds > 0 ? static_cast<double>(rec.samples) / train_seconds : 0.0;
    if (validation_end_ > train_end_)
      rec.validation = evaluate(Split::train, train_end_, validation_end_);
    else if (options_.test_as_validation)
      rec.validation = evaluate(Split::test, 0, test_end_);
    state.logs.clear();
    state.logs["loss"] = state.logs[loss_.name()] = rec.loss;
    for (const auto& [k, v] : rec.metrics) state.logs[k] = v;
    if (rec.validation) {
      state.logs["val_loss"] = state.logs["val_" + loss_.name()] = rec.validation->loss;
      for (const auto& [k, v] : rec.validation->metrics) state.logs["val_" + k] = v;
    }
    char head[160];
    std::snprintf(head, sizeof head, "Epoch %lld/%lld: %lld samples in %.2f s (%s samples/s)  ",
                  static_cast<long long>(epoch + 1), static_cast<long long>(options_.epochs),
                  static_cast<long long>(rec.samples), rec.seconds,
                  fmt_rate(rec.samples_per_second).c_str());
    std::string line = std::string(style == ProgressStyle::bar ? "\r" : "") + head +
                       fmt_metrics("", rec.loss, rec.metrics);
    if (rec.validation)
      line += "  " + fmt_metrics("val_", rec.validation->loss, rec.validation->metrics);
    print(line + (style == ProgressStyle::bar ? "\033[K\n" : "\n"));
    position = {epoch + 1, 0, global_step};
    for (auto& s : schedulers_) s->on_epoch_end(state);
    history.epochs.push_back(std::move(rec));
    if (checkpoints) checkpoints->save(model_, optimizer_, checkpoint_info());
  }
  if (!history.stopped.empty()) {
    history.train_seconds = seconds_since(run_start);
    for (const auto& e : history.epochs) history.train_samples += e.samples;
    history.ranks = ranks;
    return history;
  }
  if (ranks > 1 && sync.final_sync) {
    if (sync.frequency != 0)  // weights drifted apart: average them
      exchange_->average_weights(rank_weight(sync.algorithm, sync.participation, trained, me));
    exchange_->broadcast_weights(0);  // and make every rank's bit-identical
  }
  for (auto& s : schedulers_) s->on_train_end(state);
  history.train_seconds = seconds_since(run_start);
  for (const auto& e : history.epochs) history.train_samples += e.samples;
  history.ranks = ranks;
  if (exchange_ && exchange_->stats().steps > 0) {
    history.comm_wait_ms_per_step =
        1e3 * exchange_->stats().wait_seconds / static_cast<double>(exchange_->stats().steps);
    history.buckets = exchange_->num_buckets();
  }
  double rate = steady_seconds > 0 ? static_cast<double>(steady_samples) / steady_seconds : 0.0;
  comm_.allreduce_sum(&rate, 1, DType::float64,
                      "throughput");  // ranks train concurrently: rates add up
  history.train_samples_per_second = rate;
  char tail[200];
  std::snprintf(
      tail, sizeof tail, "Training: %lld samples in %.2f s; steady-state throughput %s samples/s\n",
      static_cast<long long>(history.train_samples), history.train_seconds, fmt_rate(rate).c_str());
  print(tail);
  if (options_.evaluate && test_end_ > 0) {
    history.test = evaluate(Split::test, 0, test_end_);
    print("Test after training: " + fmt_metrics("", history.test->loss, history.test->metrics) +
          "\n");
  }
  return history;
}

}  // namespace dtnn
