// A Communicator whose collectives are those of a `Collectives` object (tcp's Star, mqtt's Hub:
// allreduce_sum, broadcast and allgather, each given the collective's number and deadline), run in
// call order on the CollectiveQueue's thread. The transport's plugin opens the connections, then
// hands over the object.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "collective_queue.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"

namespace dtnn_net {

template <class Collectives>
class QueuedCommunicator : public dtnn::Communicator {
 public:
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void set_timeout(double seconds) override { queue_.set_timeout(seconds); }

  void allreduce_sum(void* data, std::size_t count, dtnn::DType dtype,
                     std::string_view name) override {
    queue_.run(name, [=, this](std::uint64_t seq, Deadline d) {
      collectives_->allreduce_sum(data, count, dtype, seq, d);
    });
  }

  std::unique_ptr<dtnn::CommRequest> iallreduce_sum(void* data, std::size_t count,
                                                    dtnn::DType dtype,
                                                    std::string_view name) override {
    return queue_.start(name, [=, this](std::uint64_t seq, Deadline d) {
      collectives_->allreduce_sum(data, count, dtype, seq, d);
    });
  }

  void broadcast(void* data, std::size_t count, dtnn::DType dtype, int root,
                 std::string_view name) override {
    if (root < 0 || root >= size_)
      throw dtnn::Error(transport_ + ": broadcast '" + std::string(name) + "' from rank " +
                        std::to_string(root) + " of " + std::to_string(size_));
    queue_.run(name, [=, this](std::uint64_t seq, Deadline d) {
      collectives_->broadcast(data, count, dtype, root, seq, d);
    });
  }

  void allgather(const void* send, void* recv, std::size_t count, dtnn::DType dtype,
                 std::string_view name) override {
    queue_.run(name, [=, this](std::uint64_t seq, Deadline d) {
      collectives_->allgather(send, recv, count, dtype, seq, d);
    });
  }

  bool let_ranks_leave() override {
    queue_.run("letting ranks leave",
               [this](std::uint64_t, Deadline) { collectives_->let_ranks_leave(); });
    return true;
  }

  void barrier(std::string_view name) override {
    queue_.run(name, [this](std::uint64_t seq, Deadline d) {
      collectives_->allreduce_sum(nullptr, 0, dtnn::DType::float32, seq, d);
    });
  }

 protected:
  explicit QueuedCommunicator(std::string transport) : transport_(std::move(transport)) {}

  int rank_ = 0, size_ = 1;
  std::string transport_;                     // "tcp", for errors
  std::unique_ptr<Collectives> collectives_;  // owns the connections
  CollectiveQueue queue_;  // last: its thread ends before the collectives and connections go
};

}  // namespace dtnn_net
