#include "dtnn/gradient_exchange.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "dtnn/codec.hpp"
#include "dtnn/coded_allreduce.hpp"
#include "dtnn/device.hpp"
#include "dtnn/device_communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer_trace.hpp"
#include "dtnn/log.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/trace.hpp"

namespace dtnn {

namespace {

// dst = weight * src, in parallel; src is zeroed as it is read when `consume` (a gradient taken
// over by the exchange, as an optimizer update would leave it).
void scale_into(const Tensor& src, const Tensor& dst, double weight, bool consume) {
  dispatch_dtype(src.dtype(), [&](auto z) {
    using T = decltype(z);
    T* __restrict s = src.data<T>();
    T* __restrict d = dst.data<T>();
    const T w = static_cast<T>(weight);
    parallel_chunks(src.numel(), kParallelGrain, [=](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t j = lo; j < hi; ++j) {
        d[j] = w * s[j];
        if (consume) s[j] = T(0);
      }
    });
  });
}

// Runs f and adds the seconds it took to total.
template <class F>
void timed(double& total, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* to_string(ExchangeRoute route) {
  switch (route) {
    case ExchangeRoute::host:
      return "host memory";
    case ExchangeRoute::device_library:
      return "device memory, by the device communicator";
    case ExchangeRoute::device_pointers:
      return "device memory, by the host communicator (CUDA-aware MPI)";
    case ExchangeRoute::host_staged:
      return "staged through pinned host memory";
  }
  return "?";
}

namespace {

// A tensor as the squarest matrix its axes split into (rows: the leading axes), from `offset`:
// a conv's filter bank (K, C, KH, KW) is K x C KH KW, an fc's weights a matrix, a bias one row.
BucketMatrix as_matrix(const Shape& shape, std::int64_t offset) {
  const std::int64_t n = shape.numel();
  std::int64_t rows = 1, best = 1;
  for (int axis = 0; axis + 1 < shape.rank(); ++axis) {
    rows *= shape[axis];
    if (rows + n / rows < best + n / best) best = rows;
  }
  return {static_cast<std::size_t>(offset), static_cast<std::size_t>(best),
          static_cast<std::size_t>(n / best)};
}

}  // namespace

GradientExchange::GradientExchange(Model& model, Communicator& comm, ExchangeOptions options)
    : model_(model), comm_(comm), options_(options) {
  const auto params = model_.parameters();
  bucket_of_.assign(params.size(), 0);
  slot_of_.assign(params.size(), 0);
  if (params.empty()) return;
  const DType dtype = params.front().value.dtype();
  const std::size_t element = dtype_size(dtype);
  std::int64_t total = 0;
  auto add = [&](std::size_t p) {
    if (buckets_.empty() ||
        static_cast<std::size_t>(buckets_.back().numel) * element >= options_.bucket_bytes) {
      buckets_.emplace_back();
      buckets_.back().offset = total;
    }
    Bucket& b = buckets_.back();
    DTNN_CHECK(params[p].value.dtype() == dtype, "parameters of mixed dtypes");
    bucket_of_[p] = buckets_.size() - 1;
    slot_of_[p] = b.parameters.size();
    b.parameters.push_back(p);
    b.offsets.push_back(b.numel);
    b.matrices.push_back(as_matrix(params[p].value.shape(), b.numel));
    // Each parameter starts on a 64-byte boundary, so optimizers see aligned data.
    const std::int64_t align = static_cast<std::int64_t>(64 / element);
    const std::int64_t n = (params[p].value.numel() + align - 1) / align * align;
    b.numel += n;
    total += n;
  };
  for (std::size_t layer = model_.num_layers(); layer-- > 0;) {  // backward's order
    const auto [begin, end] = model_.parameter_range(layer);
    for (std::size_t p = begin; p < end; ++p) {
      add(p);
      if (buckets_.back().parameters.size() == 1) buckets_.back().layer = layer;
    }
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i)
    buckets_[i].name = "gradients, bucket " + std::to_string(i + 1) + " of " +
                       std::to_string(buckets_.size()) + " (from " +
                       params[buckets_[i].parameters.front()].name + ")";
  const Device device = params.front().value.device();
  if (options_.ranks_may_leave) {
    DTNN_CHECK(device == Device::cpu && (!options_.codec || options_.codec->survives_departures()),
               "ranks leaving a device exchange, or one whose codec needs every rank");
    total += 1;  // the weight slot, after every bucket
  }
  flat_ = Tensor::zeros(Shape{total}, dtype, Layout::nchw, device);
  if (options_.codec) {  // the experiment refuses a codec for other models, naming the key
    DTNN_CHECK(device == Device::cpu && dtype == DType::float32,
               "a codec on a model that is not float32 on the cpu");
    coded_ = std::make_unique<CodedAllreduce>(*options_.codec, comm_);
    if (options_.ranks_may_leave) coded_->let_ranks_leave();
  }
  if (options_.pipeline) {
    if (device != Device::cpu)
      throw Error(std::string("parallel.pipeline: the pipelined exchange runs for models on the "
                              "cpu; this one is on ") +
                  to_string(device));
    other_ = Tensor::zeros(Shape{total}, dtype, Layout::nchw, device);
  }
  if (device == Device::cpu) return;
  runtime_ = &device_runtime(device);
  if (options_.device_comm) {
    route_ = ExchangeRoute::device_library;
  } else if (options_.gpudirect && comm_.accepts_memory_of(device)) {
    route_ = ExchangeRoute::device_pointers;
  } else {
    if (options_.gpudirect)
      log_warning("gpu.gpudirect: the communicator (" + comm_.describe() +
                  ") does not take device memory (MPI is not CUDA-aware); gradients go through "
                  "host memory");
    route_ = ExchangeRoute::host_staged;
    staging_ = Tensor::zeros(Shape{total}, dtype);
    runtime_->pin(staging_.raw(), staging_.bytes());
  }
}

GradientExchange::~GradientExchange() {
  if (staging_.defined()) {
    runtime_->synchronize();
    runtime_->unpin(staging_.raw());
  }
}

void* GradientExchange::at(const Tensor& t, std::int64_t offset) const {
  return static_cast<char*>(t.raw()) + static_cast<std::size_t>(offset) * dtype_size(t.dtype());
}

void GradientExchange::pack(const Tensor& src, const Tensor& dst, double weight, bool consume) {
  if (!runtime_) return scale_into(src, dst, weight, consume);
  runtime_->scale(dst.raw(), src.raw(), static_cast<std::size_t>(src.numel()), src.dtype(), weight);
  if (consume) runtime_->fill_zero(src.raw(), src.bytes());
}

std::unique_ptr<CommRequest> GradientExchange::collective(std::int64_t offset, std::int64_t count,
                                                          const std::string& name, bool blocking,
                                                          int root) {
  const auto n = static_cast<std::size_t>(count);
  const DType dtype = flat_.dtype();
  if (route_ == ExchangeRoute::device_library) {
    if (root >= 0) {
      options_.device_comm->broadcast(at(flat_, offset), n, dtype, root, name);
      return nullptr;
    }
    auto request = options_.device_comm->iallreduce_sum(at(flat_, offset), n, dtype, name);
    if (!blocking) return request;
    request->wait();
    return nullptr;
  }
  void* data = at(flat_, offset);
  if (route_ == ExchangeRoute::device_pointers) {
    runtime_->synchronize();  // MPI reads device memory outside the device's streams
  } else if (route_ == ExchangeRoute::host_staged) {
    data = at(staging_, offset);
    runtime_->copy(data, at(flat_, offset), n * dtype_size(dtype));  // returns once readable
  }
  if (root >= 0) {
    comm_.broadcast(data, n, dtype, root, name);
    return nullptr;
  }
  if (!blocking) return comm_.iallreduce_sum(data, n, dtype, name);
  comm_.allreduce_sum(data, n, dtype, name);
  return nullptr;
}

void GradientExchange::landed(std::int64_t offset, std::int64_t count) {
  if (route_ == ExchangeRoute::host_staged)
    runtime_->copy(at(flat_, offset), at(staging_, offset),
                   static_cast<std::size_t>(count) * dtype_size(flat_.dtype()));
}

Tensor GradientExchange::region(const Bucket& b, std::size_t i) const {
  return region_of(flat_, b, i);
}

Tensor GradientExchange::region_of(const Tensor& buffer, const Bucket& b, std::size_t i) const {
  const Parameter& p = model_.parameters()[b.parameters[i]];
  const std::int64_t begin = b.offset + b.offsets[i];
  return buffer.slice_batch(begin, begin + p.value.numel()).reshape(p.value.shape());
}

void GradientExchange::begin(double weight) {
  weight_ = weight;
  started_.clear();
  for (auto& b : buckets_) b.pending = b.parameters.size();
}

void GradientExchange::gradients_ready(std::size_t first, std::size_t count) {
  const auto params = model_.parameters();
  for (std::size_t p = first; p < first + count; ++p) {
    Bucket& b = buckets_[bucket_of_[p]];
    {
      const trace::Span span(trace::Phase::pack);
      pack(params[p].grad, region(b, slot_of_[p]), weight_, /*consume=*/true);
    }
    if (--b.pending == 0) start(b);
  }
  progress();
}

void GradientExchange::trace_labels(Bucket& b) {
  const std::uint64_t generation = trace::generation();
  if (b.labels_of == generation) return;
  const Layer& layer = model_.layer(b.layer);
  b.allreduce_label = layer_trace::label(layer, layer_trace::PydtnnEvent::allreduce_dw, b.name);
  b.wait_label = layer_trace::label(layer, layer_trace::PydtnnEvent::wait_dw, "wait: " + b.name);
  b.labels_of = generation;
}

void GradientExchange::trace_completed(Bucket& b) {
  if (b.started_ns < 0) return;
  if (trace::recording()) {
    trace_labels(b);
    trace::record(trace::Phase::allreduce, b.allreduce_label, b.started_ns, trace::now_ns());
  }
  b.started_ns = -1;
}

void GradientExchange::contribute_nothing() {
  for (std::size_t layer = model_.num_layers(); layer-- > 0;) {
    const auto [begin, end] = model_.parameter_range(layer);
    if (end > begin) gradients_ready(begin, end - begin);
  }
}

void GradientExchange::start(Bucket& b) {
  b.started_ns = trace::recording() ? trace::now_ns() : -1;
  if (coded_) {  // encode, allgather, decode: blocking
    const trace::Span span(trace::Phase::comm_wait);
    zero_gaps(b);
    timed(stats_.wait_seconds, [&] {
      stats_.bytes_sent += coded_->sum(
          std::span<float>(flat_.data<float>() + b.offset, static_cast<std::size_t>(b.numel)),
          b.name, options_.error_feedback, static_cast<std::size_t>(&b - buckets_.data()),
          b.matrices);
    });
  } else {
    stats_.bytes_sent += static_cast<std::uint64_t>(b.numel) * dtype_size(flat_.dtype());
    if (options_.blocking) {
      const trace::Span span(trace::Phase::comm_wait);
      timed(stats_.wait_seconds, [&] { collective(b.offset, b.numel, b.name, /*blocking=*/true); });
    } else {
      b.request = collective(b.offset, b.numel, b.name, /*blocking=*/false);
    }
  }
  if (!b.request) trace_completed(b);
  started_.push_back(static_cast<std::size_t>(&b - buckets_.data()));
}

void GradientExchange::progress() {
  if (trace::recording()) {  // each collective in flight, so that its completion is seen
    for (std::size_t i : started_)
      if (buckets_[i].request && buckets_[i].started_ns >= 0 && buckets_[i].request->test())
        trace_completed(buckets_[i]);
    return;
  }
  for (std::size_t i : started_)
    if (buckets_[i].request) {
      buckets_[i].request->test();
      return;  // one call advances the library's progress engine for all of them
    }
  for (std::size_t i : in_flight_)  // pipelined: before this step's first bucket, the previous
    if (buckets_[i].in_flight) {
      buckets_[i].in_flight->test();
      return;
    }
}

bool GradientExchange::apply(const Tensor& buffer, const std::vector<std::size_t>& order,
                             std::unique_ptr<CommRequest> Bucket::*request, Optimizer& optimizer,
                             NonFinitePolicy policy) {
  const auto params = model_.parameters();
  const bool previous = request == &Bucket::in_flight;  // pipelined: the previous step's sums
  auto wait = [&](Bucket& b) {
    if (b.*request) {
      if (trace::recording()) trace_labels(b);
      const trace::Span span(trace::Phase::comm_wait, b.wait_label);
      timed(stats_.wait_seconds, [&] { (b.*request)->wait(); });
      (b.*request).reset();
      if (previous) std::swap(b.started_ns, b.in_flight_started_ns);
      trace_completed(b);
      if (previous) std::swap(b.started_ns, b.in_flight_started_ns);
    }
    landed(b.offset, b.numel);
  };
  auto finite = [&](Bucket& b) {
    for (std::size_t k = 0; k < b.parameters.size(); ++k)
      if (!all_finite(region_of(buffer, b, k))) return false;
    return true;
  };
  const bool all_first = policy == NonFinitePolicy::skip_batch;
  if (all_first) {  // all or nothing: every sum lands and is checked before any update
    bool ok = true;
    for (std::size_t i : order) {
      wait(buckets_[i]);
      ok = ok && finite(buckets_[i]);
    }
    if (!ok) return false;
  }
  optimizer.begin_step();
  for (std::size_t n = 0; n < order.size(); ++n) {
    Bucket& b = buckets_[order[n]];
    if (!all_first) wait(b);
    if (policy == NonFinitePolicy::stop && !finite(b)) {
      for (std::size_t j = n + 1; j < order.size(); ++j) wait(buckets_[order[j]]);
      return false;
    }
    const trace::Span span(trace::Phase::optimizer);
    for (std::size_t k = 0; k < b.parameters.size(); ++k) {
      const Parameter& p = params[b.parameters[k]];
      optimizer.update(b.parameters[k], Parameter{std::string(), p.value, region_of(buffer, b, k)});
    }
  }
  return true;
}

bool GradientExchange::finish(Optimizer& optimizer, NonFinitePolicy policy) {
  DTNN_CHECK(started_.size() == buckets_.size(), "a bucket's gradients were never reported");
  ++stats_.steps;
  if (!options_.pipeline) return apply(flat_, started_, &Bucket::request, optimizer, policy);
  // The previous step's sums, then this step's: in flight until the next finish, or now.
  bool ok = drain(optimizer, policy);
  if (drain_next_) {
    drain_next_ = false;
    return apply(flat_, started_, &Bucket::request, optimizer, policy) && ok;
  }
  for (Bucket& b : buckets_) {
    b.in_flight = std::move(b.request);
    b.in_flight_started_ns = std::exchange(b.started_ns, -1);
  }
  in_flight_ = started_;
  std::swap(flat_, other_);  // the next step packs into the buffer just applied
  return ok;
}

bool GradientExchange::drain(Optimizer& optimizer, NonFinitePolicy policy) {
  if (in_flight_.empty()) return true;
  const std::vector<std::size_t> order = std::move(in_flight_);
  in_flight_.clear();
  return apply(other_, order, &Bucket::in_flight, optimizer, policy);
}

// The alignment gaps between a bucket's parameters hold what the last sum left there: zeros from
// an exact sum, but a codec's noise (ckks) would be summed again each time, times the ranks.
void GradientExchange::zero_gaps(const Bucket& b) {
  const auto params = model_.parameters();
  float* data = flat_.data<float>() + b.offset;
  for (std::size_t k = 0; k < b.parameters.size(); ++k) {
    const std::int64_t end = k + 1 < b.offsets.size() ? b.offsets[k + 1] : b.numel;
    std::fill(data + b.offsets[k] + params[b.parameters[k]].value.numel(), data + end, 0.0f);
  }
}

void GradientExchange::pack_all_values(double weight) {
  const auto params = model_.parameters();
  for (Bucket& b : buckets_)
    for (std::size_t k = 0; k < b.parameters.size(); ++k)
      pack(params[b.parameters[k]].value, region(b, k), weight, /*consume=*/false);
}

void GradientExchange::unpack_all_values() {
  const auto params = model_.parameters();
  for (Bucket& b : buckets_)
    for (std::size_t k = 0; k < b.parameters.size(); ++k) {
      Tensor value = params[b.parameters[k]].value;  // a handle on the same storage
      value.copy_from(region(b, k));
    }
}

void GradientExchange::average_weights(double weight) {
  const trace::Span span(trace::Phase::model_sync);
  pack_all_values(weight);
  // flat_ summed over the ranks: through the codec when it carries weights (true), else plain.
  const bool coded = coded_ && options_.codec->carries_weights();
  auto sum_values = [&] {
    if (coded) {
      for (Bucket& b : buckets_) zero_gaps(b);
      stats_.bytes_sent += coded_->sum(
          std::span<float>(flat_.data<float>(), static_cast<std::size_t>(flat_.numel())),
          "model sync: weights", /*error_feedback=*/false);
    } else {
      collective(0, flat_.numel(), "model sync: weights", /*blocking=*/true);
      stats_.bytes_sent += static_cast<std::uint64_t>(flat_.numel()) * dtype_size(flat_.dtype());
    }
  };
  if (!options_.ranks_may_leave) {
    sum_values();
    landed(0, flat_.numel());
    unpack_all_values();
    return;
  }
  const std::int64_t slot = flat_.numel() - 1;  // the weight slot goes through the sum too
  dispatch_dtype(flat_.dtype(), [&](auto z) {
    using T = decltype(z);
    T* v = flat_.data<T>();
    v[slot] = static_cast<T>(weight);
    sum_values();
    // The weights of the ranks that took part sum to 1 unless one left during the collective
    // (through a codec, its own account of who is absent: a lossy codec's slot is not exactly 1).
    const bool someone_left =
        coded ? !coded_->absent().empty() : std::abs(v[slot] - T(1)) > T(1e-5);
    const T total = v[slot];
    if (total > T(0) && someone_left)
      for (std::int64_t i = 0; i < slot; ++i) v[i] /= total;
  });
  unpack_all_values();
}

std::vector<std::vector<float>> GradientExchange::codec_states() const {
  return coded_ ? coded_->codec_states() : std::vector<std::vector<float>>{};
}

void GradientExchange::set_codec_states(std::vector<std::vector<float>> states) {
  DTNN_CHECK(coded_ && states.size() <= buckets_.size(), "codec states of another exchange");
  coded_->set_codec_states(std::move(states));
}

std::vector<float> GradientExchange::residuals() const {
  std::vector<float> out(static_cast<std::size_t>(flat_.numel()), 0.0f);
  if (!keeps_residuals()) return out;
  const auto& kept = coded_->residuals();
  for (std::size_t b = 0; b < kept.size() && b < buckets_.size(); ++b)
    std::copy(kept[b].begin(), kept[b].end(), out.begin() + buckets_[b].offset);
  return out;
}

void GradientExchange::set_residuals(std::span<const float> residuals) {
  DTNN_CHECK(keeps_residuals(), "residuals without error feedback");
  DTNN_CHECK(residuals.size() == static_cast<std::size_t>(flat_.numel()),
             "residuals of another model");
  std::vector<std::vector<float>> kept(buckets_.size());
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    const auto* at = residuals.data() + buckets_[b].offset;
    kept[b].assign(at, at + buckets_[b].numel);
  }
  coded_->set_residuals(std::move(kept));
}

// One broadcast of the packed model rather than one per parameter: fewer, larger messages.
void GradientExchange::broadcast_weights(int root) {
  if (buckets_.empty()) return;
  const trace::Span span(trace::Phase::model_sync);
  pack_all_values(1.0);
  collective(0, flat_.numel(), "weights from rank " + std::to_string(root), /*blocking=*/true,
             root);
  landed(0, flat_.numel());
  unpack_all_values();
}

}  // namespace dtnn
