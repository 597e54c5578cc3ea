// The collectives of a communicator that talks over its own connections, run in call order on one
// thread of the queue's: a non-blocking allreduce proceeds while the caller computes, and every
// rank numbers its collectives alike (1, 2, ...), so a message can say which one it belongs to.
// Each runs under the timeout from when it starts; its error (a peer gone, a malformed message, the
// timeout) gets the collective's number and name, and fails it and every later one at once.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "deadline.hpp"
#include "dtnn/communicator.hpp"

namespace dtnn_net {

class CollectiveQueue {
 public:
  using Collective = std::function<void(std::uint64_t seq, Deadline deadline)>;

  CollectiveQueue();
  ~CollectiveQueue();  // runs what is queued, then stops
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  void set_timeout(double seconds) { timeout_ = seconds; }

  // Queues a collective; its future is ready when it ran (or holds its error).
  std::future<void> enqueue(std::string_view name, Collective collective);
  // Queues one and waits for it, rethrowing its error.
  void run(std::string_view name, Collective collective) {
    enqueue(name, std::move(collective)).get();
  }
  // Queues one, as a request a caller waits on or tests.
  std::unique_ptr<dtnn::CommRequest> start(std::string_view name, Collective collective);

 private:
  struct Job {
    std::function<void()> work;
    std::promise<void> done;
  };
  void run_jobs();

  double timeout_ = 0;
  std::uint64_t seq_ = 0;  // the caller's thread
  std::string failed_;     // the worker's: the first error, repeated by every later collective
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace dtnn_net
