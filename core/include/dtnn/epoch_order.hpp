// The samples each rank trains at each step of an epoch. Every rank shuffles the training split
// with the same seed, so all hold the same order; the epoch's samples are that order, cut short or
// gone through again (PyDTNN's dataset percentage); a step's global batch is cut into contiguous
// per-rank parts that differ by at most one sample. Shards need no communication.
// With per-rank datasets (parallel.shared_data false) each rank goes through its own training
// split instead, `batch` samples a step, and the epoch lasts as long as the longest rank's: a rank
// past its end trains no samples (and so weighs nothing in wavg's averages).
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT EpochOrder {
 public:
  // train_samples: the split's size; epoch_samples: how many an epoch goes through; global_batch:
  // samples per step over all ranks.
  EpochOrder(std::int64_t train_samples, std::int64_t epoch_samples, std::int64_t global_batch,
             int ranks);
  // Per-rank datasets: this rank's split of train_samples, every rank's epoch (epoch_samples[r]),
  // and the batch each rank takes per step.
  EpochOrder(std::int64_t train_samples, std::vector<std::int64_t> epoch_samples,
             std::int64_t batch, int rank);

  // The order of epoch (from 0): the split shuffled by (seed, epoch), or in order.
  void begin_epoch(std::uint64_t seed, std::int64_t epoch, bool shuffle);

  std::int64_t steps() const;  // every sample of the epoch once: ceil(epoch samples / batch)
  // Samples the first `steps` steps train over all ranks.
  std::int64_t samples(std::int64_t steps) const;
  // Rank r's part of step s: {its first position in its order, its count}.
  std::pair<std::int64_t, std::int64_t> part(std::int64_t step, int rank) const;
  // Rank r's samples at step s; with per-rank datasets only this rank's own.
  std::span<const std::int64_t> indices(std::int64_t step, int rank) const;

 private:
  std::vector<std::int64_t> shuffled_, order_;
  std::int64_t global_batch_;  // per-rank datasets: each rank's batch
  int ranks_;
  std::vector<std::int64_t> per_rank_;  // per-rank datasets: every rank's epoch samples
  int rank_ = 0;
};

}  // namespace dtnn
