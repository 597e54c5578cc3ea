#include "dtnn/simulated_network.hpp"

#include <algorithm>
#include <thread>

namespace dtnn {

namespace {

void wait_until(SimulatedNetwork::Clock::time_point deadline) {
  if (SimulatedNetwork::Clock::now() < deadline) std::this_thread::sleep_until(deadline);
}

double bytes(std::size_t count, DType dtype) {
  return static_cast<double>(count) * static_cast<double>(dtype_size(dtype));
}

// The inner request, not complete before the network's deadline.
class SimulatedRequest final : public CommRequest {
 public:
  SimulatedRequest(std::unique_ptr<CommRequest> inner, SimulatedNetwork::Clock::time_point deadline)
      : inner_(std::move(inner)), deadline_(deadline) {}
  void wait() override {
    inner_->wait();
    wait_until(deadline_);
  }
  bool test() override { return inner_->test() && SimulatedNetwork::Clock::now() >= deadline_; }

 private:
  std::unique_ptr<CommRequest> inner_;
  SimulatedNetwork::Clock::time_point deadline_;
};

}  // namespace

// A blocking collective's network time counts from when the real one completed (when the last
// rank had arrived), a non-blocking one's from its start (the ranks start their buckets alike).
SimulatedNetwork::SimulatedNetwork(std::shared_ptr<Communicator> inner, NetworkModel network)
    : inner_(std::move(inner)), network_(network) {}

SimulatedNetwork::Clock::time_point SimulatedNetwork::book(double seconds) {
  const Clock::time_point start = std::max(Clock::now(), link_free_);
  link_free_ =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  return link_free_;
}

void SimulatedNetwork::allreduce_sum(void* data, std::size_t count, DType dtype,
                                     std::string_view name) {
  inner_->allreduce_sum(data, count, dtype, name);
  const auto deadline = book(network_.allreduce_seconds(bytes(count, dtype), size()));
  wait_until(deadline);
}

std::unique_ptr<CommRequest> SimulatedNetwork::iallreduce_sum(void* data, std::size_t count,
                                                              DType dtype, std::string_view name) {
  const auto deadline = book(network_.allreduce_seconds(bytes(count, dtype), size()));
  return std::make_unique<SimulatedRequest>(inner_->iallreduce_sum(data, count, dtype, name),
                                            deadline);
}

void SimulatedNetwork::broadcast(void* data, std::size_t count, DType dtype, int root,
                                 std::string_view name) {
  inner_->broadcast(data, count, dtype, root, name);
  const auto deadline = book(network_.broadcast_seconds(bytes(count, dtype), size()));
  wait_until(deadline);
}

void SimulatedNetwork::allgather(const void* send, void* recv, std::size_t count, DType dtype,
                                 std::string_view name) {
  inner_->allgather(send, recv, count, dtype, name);
  const auto deadline = book(network_.allgather_seconds(bytes(count, dtype), size()));
  wait_until(deadline);
}

void SimulatedNetwork::alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                                std::string_view name) {
  inner_->alltoall(send, recv, count, dtype, name);
  const auto deadline = book(network_.alltoall_seconds(bytes(count, dtype), size()));
  wait_until(deadline);
}

void SimulatedNetwork::barrier(std::string_view name) {
  inner_->barrier(name);
  const auto deadline = book(network_.barrier_seconds(size()));
  wait_until(deadline);
}

std::string SimulatedNetwork::describe() const {
  return inner_->describe() + ", simulated network: " + network_.describe();
}

}  // namespace dtnn
