// BatchPlan: the samples of one training step, over all ranks and on the busiest rank, from
// training.batch_size (per rank) and training.global_batch_size (0: batch_size on every rank).
// A step's global batch is cut into contiguous per-rank parts that differ by at most one sample
// (EpochOrder::part), so no rank takes more than ceil(global / ranks): what the model is sized for
// (ModelOptions::max_batch), what the trainer checks, and what the scaling model costs a rank at.
#pragma once
#include <cstdint>

namespace dtnn {

struct BatchPlan {
  std::int64_t global = 0;    // samples per step over all ranks
  std::int64_t rank_max = 0;  // the most samples one rank takes in a step
  int ranks = 1;

  static BatchPlan of(std::int64_t batch_size, std::int64_t global_batch_size, int ranks) {
    BatchPlan plan;
    plan.global = global_batch_size > 0 ? global_batch_size : batch_size * ranks;
    plan.rank_max = (plan.global + ranks - 1) / ranks;
    plan.ranks = ranks;
    return plan;
  }
  // Rank r's part of a whole step (EpochOrder::part's cut).
  std::int64_t share(int rank) const { return cut(rank + 1) - cut(rank); }

 private:
  std::int64_t cut(int rank) const { return global * rank / ranks; }
};

}  // namespace dtnn
