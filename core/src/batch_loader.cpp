#include "dtnn/batch_loader.hpp"

#include <omp.h>

#include <algorithm>
#include <span>
#include <utility>

#include "dtnn/error.hpp"
#include "dtnn/trace.hpp"

namespace dtnn {

BatchLoader::BatchLoader(const Dataset& dataset, const AugmentOptions& augment,
                         std::int64_t max_batch, DType dtype, Layout layout, bool prefetch)
    : dataset_(dataset), augment_(augment) {
  const Shape sample = dataset_.sample_shape(layout);
  for (Slot& s : std::span(slots_, prefetch ? 2 : 1)) {  // made in place: one buffer serves
    s.x = Tensor::empty(sample.with_batch(max_batch), dtype, layout);
    s.y = Tensor::empty(dataset_.label_shape().with_batch(max_batch), dtype, layout);
    s.indices.resize(static_cast<std::size_t>(max_batch));
  }
  if (augment_.augments()) {
    if (sample.rank() != 3) throw Error("dataset: augmentation needs image samples");
    scratch_ = Tensor::empty(Shape{std::max(1, omp_get_max_threads()) * sample.numel()}, dtype);
  }
  if (prefetch) worker_ = std::thread([this] { run(); });
}

BatchLoader::~BatchLoader() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void BatchLoader::fill(Slot& slot, std::span<const std::int64_t> indices, std::uint64_t seed) {
  DTNN_CHECK(indices.size() <= slot.indices.size(), "batch loader: batch above max_batch");
  std::copy(indices.begin(), indices.end(), slot.indices.begin());
  slot.n = static_cast<std::int64_t>(indices.size());
  slot.seed = seed;
}

void BatchLoader::make(Slot& slot) {
  if (slot.n == 0) return;
  const trace::Span span(worker_.get_id() == std::this_thread::get_id() ? trace::Phase::load
                                                                        : trace::Phase::data);
  const std::span<const std::int64_t> ids(slot.indices.data(), static_cast<std::size_t>(slot.n));
  Tensor x = slot.x.slice_batch(0, slot.n), y = slot.y.slice_batch(0, slot.n);
  dataset_.read(Split::train, ids, x, y);
  const trace::Span augmenting(trace::Phase::augment);
  augment(x, ids, augment_, slot.seed, scratch_);
  normalize(x, augment_);
}

void BatchLoader::run() {
  omp_set_num_threads(1);
  trace::name_thread("batch loader");
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || (requested_ && !ready_); });
    if (stop_) return;
    Slot& slot = slots_[1 - next_];
    lock.unlock();
    std::exception_ptr error;
    try {
      make(slot);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    ready_ = true;
    changed_.notify_all();
  }
}

void BatchLoader::wait_until_idle(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [&] { return !requested_ || ready_; });
}

std::vector<Tensor> BatchLoader::buffers() const {
  std::vector<Tensor> out;
  for (const Slot& s : slots_)
    if (s.x.defined()) {
      out.push_back(s.x);
      out.push_back(s.y);
    }
  return out;
}

void BatchLoader::settle() {
  if (!prefetching()) return;
  std::unique_lock lock(mutex_);
  wait_until_idle(lock);
}

void BatchLoader::request(std::span<const std::int64_t> indices, std::uint64_t augment_seed) {
  if (!prefetching()) {
    dataset_.prefetch(Split::train, indices);
    return;
  }
  std::unique_lock lock(mutex_);
  wait_until_idle(lock);  // on an earlier request nobody took
  fill(slots_[next_], indices, augment_seed);
  next_ = 1 - next_;  // the request's slot is now 1 - next_
  requested_ = true;
  ready_ = false;
  error_ = nullptr;
  changed_.notify_all();
}

BatchLoader::Batch BatchLoader::take(std::span<const std::int64_t> indices,
                                     std::uint64_t augment_seed) {
  if (prefetching()) {
    std::unique_lock lock(mutex_);
    {
      const trace::Span waited(trace::Phase::data);  // for the batch made in the background
      wait_until_idle(lock);
    }
    if (requested_) {
      requested_ = false;
      Slot& slot = slots_[1 - next_];
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      if (slot.seed == augment_seed &&
          std::equal(indices.begin(), indices.end(), slot.indices.begin(),
                     slot.indices.begin() + slot.n) &&
          static_cast<std::int64_t>(indices.size()) == slot.n)
        return {slot.x.slice_batch(0, slot.n), slot.y.slice_batch(0, slot.n)};
    }
  }
  Slot& slot = slots_[next_];
  if (prefetching()) next_ = 1 - next_;
  fill(slot, indices, augment_seed);
  make(slot);
  return {slot.x.slice_batch(0, slot.n), slot.y.slice_batch(0, slot.n)};
}

}  // namespace dtnn
