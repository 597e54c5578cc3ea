#include "dtnn/gradient_exchange.hpp"

#include <chrono>

#include "dtnn/error.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/parallel.hpp"

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
    // Each parameter starts on a 64-byte boundary, so optimizers see aligned data.
    const std::int64_t align = static_cast<std::int64_t>(64 / element);
    const std::int64_t n = (params[p].value.numel() + align - 1) / align * align;
    b.numel += n;
    total += n;
  };
  for (std::size_t layer = model_.num_layers(); layer-- > 0;) {  // backward's order
    const auto [begin, end] = model_.parameter_range(layer);
    for (std::size_t p = begin; p < end; ++p) add(p);
  }
  for (std::size_t i = 0; i < buckets_.size(); ++i)
    buckets_[i].name = "gradients, bucket " + std::to_string(i + 1) + " of " +
                       std::to_string(buckets_.size()) + " (from " +
                       params[buckets_[i].parameters.front()].name + ")";
  flat_ = Tensor::zeros(Shape{total}, dtype);
}

GradientExchange::~GradientExchange() = default;

Tensor GradientExchange::region(const Bucket& b, std::size_t i) const {
  const Parameter& p = model_.parameters()[b.parameters[i]];
  const std::int64_t begin = b.offset + b.offsets[i];
  return flat_.slice_batch(begin, begin + p.value.numel()).reshape(p.value.shape());
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
    scale_into(params[p].grad, region(b, slot_of_[p]), weight_, /*consume=*/true);
    if (--b.pending == 0) start(b);
  }
  progress();
}

void GradientExchange::contribute_nothing() {
  for (std::size_t layer = model_.num_layers(); layer-- > 0;) {
    const auto [begin, end] = model_.parameter_range(layer);
    if (end > begin) gradients_ready(begin, end - begin);
  }
}

void GradientExchange::start(Bucket& b) {
  void* data = static_cast<char*>(flat_.raw()) +
               static_cast<std::size_t>(b.offset) * dtype_size(flat_.dtype());
  const auto count = static_cast<std::size_t>(b.numel);
  if (options_.blocking)
    timed(stats_.wait_seconds, [&] { comm_.allreduce_sum(data, count, flat_.dtype(), b.name); });
  else
    b.request = comm_.iallreduce_sum(data, count, flat_.dtype(), b.name);
  started_.push_back(static_cast<std::size_t>(&b - buckets_.data()));
}

void GradientExchange::progress() {
  for (std::size_t i : started_)
    if (buckets_[i].request) {
      buckets_[i].request->test();
      break;  // one call advances the library's progress engine for all of them
    }
}

void GradientExchange::finish(Optimizer& optimizer) {
  DTNN_CHECK(started_.size() == buckets_.size(), "a bucket's gradients were never reported");
  const auto params = model_.parameters();
  optimizer.begin_step();
  for (std::size_t i : started_) {
    Bucket& b = buckets_[i];
    if (b.request) {
      timed(stats_.wait_seconds, [&] { b.request->wait(); });
      b.request.reset();
    }
    for (std::size_t k = 0; k < b.parameters.size(); ++k) {
      const Parameter& p = params[b.parameters[k]];
      optimizer.update(b.parameters[k], Parameter{std::string(), p.value, region(b, k)});
    }
  }
  ++stats_.steps;
}

void GradientExchange::average_weights(double weight) {
  const auto params = model_.parameters();
  for (Bucket& b : buckets_)
    for (std::size_t k = 0; k < b.parameters.size(); ++k)
      scale_into(params[b.parameters[k]].value, region(b, k), weight, /*consume=*/false);
  comm_.allreduce_sum(flat_.raw(), static_cast<std::size_t>(flat_.numel()), flat_.dtype(),
                      "model sync: weights");
  for (Bucket& b : buckets_)
    for (std::size_t k = 0; k < b.parameters.size(); ++k) {
      Tensor value = params[b.parameters[k]].value;  // a handle on the same storage
      value.copy_from(region(b, k));
    }
}

void GradientExchange::broadcast_weights(int root) {
  for (const Parameter& p : model_.parameters())
    comm_.broadcast(p.value.raw(), static_cast<std::size_t>(p.value.numel()), p.value.dtype(), root,
                    "weights from rank " + std::to_string(root) + ": " + p.name);
}

}  // namespace dtnn
