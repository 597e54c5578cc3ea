// network_model: what a collective costs on a network of a given latency (alpha) and bandwidth
// (beta), as MPI libraries and NCCL run them: an allreduce by a ring (2(p-1) steps, each rank
// sending 2(p-1)/p of the buffer) or by a tree (recursive doubling: ceil(log2 p) exchanges of the
// whole buffer), whichever is cheaper for the size, as Open MPI's tuned component and NCCL choose;
// a broadcast by a binomial tree; an allgather by a ring; an all-to-all by pairwise exchange. Used
// by the simulated network (parallel.simulated_network) and by `dtnn predict`.
#pragma once
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

struct NetworkModel {
  double latency_us = 0;      // per message
  double bandwidth_gbps = 0;  // gigabits per second per link; 0: unlimited

  bool active() const { return latency_us > 0 || bandwidth_gbps > 0; }
  // Seconds to move `bytes` over one link, one message.
  DTNN_CORE_EXPORT double message_seconds(double bytes) const;
  DTNN_CORE_EXPORT double allreduce_seconds(double bytes, int ranks) const;
  DTNN_CORE_EXPORT double broadcast_seconds(double bytes, int ranks) const;
  DTNN_CORE_EXPORT double allgather_seconds(double bytes_per_rank, int ranks) const;
  DTNN_CORE_EXPORT double alltoall_seconds(double bytes_per_block, int ranks) const;
  DTNN_CORE_EXPORT double barrier_seconds(int ranks) const;
  DTNN_CORE_EXPORT std::string describe() const;  // "10 us, 25 Gb/s"
};

// "latency_us=5,bandwidth_gbps=25" (either may be left out); errors name `where`.
DTNN_CORE_EXPORT NetworkModel parse_network(const std::string& text, const std::string& where);

}  // namespace dtnn
