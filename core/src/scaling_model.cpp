#include "dtnn/scaling_model.hpp"

#include <algorithm>

#include "dtnn/batch_plan.hpp"

namespace dtnn {

namespace {

struct Bucket {
  double bytes = 0, ready = 0, optimizer_s = 0;
  bool closed = false;
};

}  // namespace

ScalingPoint predict_step(const StepCost& cost, const ScalingOptions& o, int ranks) {
  ScalingPoint p;
  p.ranks = ranks;
  p.batch_per_rank = BatchPlan::of(o.batch_size, o.global_batch_size, ranks).rank_max;
  double scale = static_cast<double>(p.batch_per_rank) / static_cast<double>(cost.batch);
  if (o.shared_cores > 0)  // the busiest core runs ceil(threads / cores) of them, and the
    // collectives wait for its ranks
    scale *= std::max(1, (ranks * o.threads_per_rank + o.shared_cores - 1) / o.shared_cores);
  double t = (cost.data_s + cost.loss_s) * scale, optimizer = 0, parameters = 0;
  for (const LayerCost& l : cost.layers) {
    t += l.forward_s * scale;
    optimizer += l.optimizer_s;
    parameters += l.parameter_bytes;
  }
  const bool exchange = ranks > 1 && o.model_sync_freq == 0;
  // Backward, last layer first, filling buckets (and, blocking, waiting for each).
  std::vector<Bucket> buckets;
  double link_free = 0, blocked = 0;
  // A bucket is ready once it is full (or holds the first layer's gradients): its allreduce
  // starts then; blocking, backward waits for it.
  auto close = [&](Bucket& b) {
    b.closed = true;
    b.ready = t;
    if (!o.blocking) return;
    const double comm = o.network.allreduce_seconds(b.bytes, ranks);
    blocked += comm;
    t += comm;
    b.ready = t;
  };
  for (auto l = cost.layers.rbegin(); l != cost.layers.rend(); ++l) {
    t += l->backward_s * scale;
    if (!exchange || l->parameter_bytes == 0) continue;
    if (buckets.empty() || buckets.back().closed) buckets.emplace_back();
    buckets.back().bytes += l->parameter_bytes;
    buckets.back().optimizer_s += l->optimizer_s;
    if (buckets.back().bytes >= o.bucket_bytes) close(buckets.back());
  }
  if (!buckets.empty() && !buckets.back().closed) close(buckets.back());
  const double compute = t - blocked + optimizer;
  double end = t;
  if (exchange) {
    for (Bucket& b : buckets) {  // non-blocking: on the link in order; updates after backward
      double landed = b.ready;
      if (!o.blocking) {
        const double start = std::max(b.ready, link_free);
        link_free = landed = start + o.network.allreduce_seconds(b.bytes, ranks);
      }
      end = std::max(end, landed) + b.optimizer_s;
    }
  } else {
    end += optimizer;
    if (ranks > 1 && o.model_sync_freq > 0)
      end +=
          o.network.allreduce_seconds(parameters, ranks) / static_cast<double>(o.model_sync_freq);
  }
  if (ranks > 1) end += o.network.allreduce_seconds(16, ranks);  // the step's status
  p.buckets = buckets.size();
  p.step_s = end;
  p.compute_s = compute;
  p.comm_wait_s = end - compute;
  p.samples_per_second = static_cast<double>(ranks * p.batch_per_rank) / end;
  return p;
}

std::vector<ScalingPoint> predict_scaling(const StepCost& cost, const ScalingOptions& options,
                                          std::span<const int> ranks) {
  const double one = predict_step(cost, options, 1).samples_per_second;
  std::vector<ScalingPoint> points;
  for (int r : ranks) {
    ScalingPoint p = predict_step(cost, options, r);
    p.speedup = one > 0 ? p.samples_per_second / one : 0;
    p.efficiency = p.speedup / r;
    points.push_back(p);
  }
  return points;
}

}  // namespace dtnn
