// BatchLoader: makes the training batches (the dataset's read, augmentation, normalisation).
// With prefetching on, a background thread makes the next batch while the current one trains
// (PyDTNN's prefetching, for every dataset): the trainer names the next step's samples with
// request() and picks the batch up with take(). With it off, request() only passes the hint on
// to the dataset (which may decode ahead) and take() makes the batch in the caller.
//
// The background thread runs its OpenMP regions on one thread, so that it takes no core from
// the training step's threads for longer than one read. With prefetching, two batch buffers
// alternate: the one being filled is never the one being trained on; without, one serves.
// Nothing allocates once the buffers have been used.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "dtnn/augmentation.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT BatchLoader {
 public:
  struct Batch {
    Tensor x, y;  // [n, ...] views of one of the loader's buffers
  };

  BatchLoader(const Dataset& dataset, const AugmentOptions& augment, std::int64_t max_batch,
              DType dtype, Layout layout, bool prefetch);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  bool prefetching() const { return worker_.joinable(); }
  // The samples of the next take(), augmented with this seed. At most max_batch of them.
  void request(std::span<const std::int64_t> indices, std::uint64_t augment_seed);
  // The batch of these training samples: the requested one when they are the samples of the
  // last request (waiting for the background thread if it is not done), else made now. Valid
  // until the next take(). Rethrows an error the background thread met.
  Batch take(std::span<const std::int64_t> indices, std::uint64_t augment_seed);
  // Waits until the background thread is idle (before the dataset is read elsewhere).
  void settle();
  // The batch buffers take() hands out views of (for a GPU run to page-lock them).
  std::vector<Tensor> buffers() const;

 private:
  struct Slot {
    Tensor x, y;
    std::vector<std::int64_t> indices;  // capacity max_batch
    std::int64_t n = 0;
    std::uint64_t seed = 0;
  };
  void make(Slot& slot);  // read, augment, normalise slot.indices into slot.x / slot.y
  void run();             // the background thread
  // Until no request is being made (the mutex held by lock).
  void wait_until_idle(std::unique_lock<std::mutex>& lock);
  static void fill(Slot& slot, std::span<const std::int64_t> indices, std::uint64_t seed);

  const Dataset& dataset_;
  AugmentOptions augment_;
  Tensor scratch_;  // augmentation: one sample per thread
  Slot slots_[2];   // the second only with prefetching
  int next_ = 0;    // the slot the next batch goes into

  std::mutex mutex_;
  std::condition_variable changed_;
  bool requested_ = false;  // a request is pending or being made (slot 1 - next_)
  bool ready_ = false;      // ... and it is made
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace dtnn
