// SimulatedNetwork: a communicator whose collectives complete no sooner than a given network
// (dtnn/network_model.hpp) would let them (parallel.simulated_network), so that overlap and
// bucket sizes can be studied on one machine as if on 10 Gb/s Ethernet or InfiniBand. It wraps
// the real communicator: each collective runs there, then waits out the rest of the network's
// time. Collectives share one link: a non-blocking allreduce started while another is in flight
// begins its network time when that one ends. The waits show in traces as communication waits.
#pragma once
#include <chrono>
#include <memory>

#include "dtnn/communicator.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/network_model.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT SimulatedNetwork final : public Communicator {
 public:
  using Clock = std::chrono::steady_clock;
  SimulatedNetwork(std::shared_ptr<Communicator> inner, NetworkModel network);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  void allreduce_sum(void* data, std::size_t count, DType dtype, std::string_view name) override;
  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                              std::string_view name) override;
  void broadcast(void* data, std::size_t count, DType dtype, int root,
                 std::string_view name) override;
  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view name) override;
  void alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                std::string_view name) override;
  void barrier(std::string_view name) override;
  void set_timeout(double seconds) override { inner_->set_timeout(seconds); }
  bool accepts_memory_of(Device d) const override { return inner_->accepts_memory_of(d); }
  std::string describe() const override;

 private:
  // When a collective of this cost, started now, may complete: after the link is free.
  Clock::time_point book(double seconds);

  std::shared_ptr<Communicator> inner_;
  NetworkModel network_;
  Clock::time_point link_free_{};
};

}  // namespace dtnn
