// scaling_model: the predicted training step of N data-parallel ranks (dtnn predict), from one
// rank's measured step: per layer its forward and backward time and its parameters, the data,
// loss and optimizer times, and the network's costs (dtnn/network_model.hpp).
//
// A step of N ranks, each on its batch (the configured per-rank batch, or the global batch
// split N ways; times scale linearly with the batch):
//   data, forward, loss, then backward layer by layer, last layer first. Gradients fill buckets
//   in that order as GradientExchange fills them (a bucket closes once it holds bucket_bytes); a
//   bucket is ready when its last layer's backward ends, and its allreduce starts then or when the
//   link is free, whichever is later (blocking: backward waits for it). Each bucket's update runs
//   once its allreduce has completed and backward has ended. Then the step's status collective.
//   With model averaging (model_sync_freq N > 0) ranks update alone and every N steps all weights
//   are averaged: an allreduce of every parameter, spread over the N steps.
// One rank's step: the same with no exchange (the updates during backward).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/network_model.hpp"

namespace dtnn {

struct LayerCost {
  double forward_s = 0, backward_s = 0;  // at StepCost::batch samples
  double parameter_bytes = 0;
  double optimizer_s = 0;  // updating its parameters (independent of the batch)
};

struct StepCost {
  std::int64_t batch = 1;  // the per-rank batch the times were measured at
  double data_s = 0, loss_s = 0;
  std::vector<LayerCost> layers;  // model order
};

struct ScalingOptions {
  NetworkModel network;
  double bucket_bytes = 4.0 * (1 << 20);
  bool blocking = false;
  std::int64_t model_sync_freq = 0;
  std::int64_t batch_size = 64;        // per rank
  std::int64_t global_batch_size = 0;  // 0: batch_size x ranks
  // Ranks that share the cores of one machine (a validation run): compute times are multiplied
  // by ceil(ranks x threads / cores), the threads the busiest core runs (the collectives wait for
  // its ranks). 0: every rank has its own cores.
  int shared_cores = 0;
  int threads_per_rank = 1;
};

struct ScalingPoint {
  int ranks = 1;
  std::int64_t batch_per_rank = 0;
  std::size_t buckets = 0;
  double step_s = 0, compute_s = 0, comm_wait_s = 0;  // comm_wait: step beyond compute
  double samples_per_second = 0, speedup = 0, efficiency = 0;
};

DTNN_CORE_EXPORT ScalingPoint predict_step(const StepCost& cost, const ScalingOptions& options,
                                           int ranks);
// predict_step for each rank count; speedup and efficiency against one rank.
DTNN_CORE_EXPORT std::vector<ScalingPoint> predict_scaling(const StepCost& cost,
                                                           const ScalingOptions& options,
                                                           std::span<const int> ranks);

}  // namespace dtnn
