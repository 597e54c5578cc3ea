#include "collective_queue.hpp"

#include "dtnn/error.hpp"
#include "dtnn/log.hpp"

namespace dtnn_net {

namespace {

class QueuedRequest final : public dtnn::CommRequest {
 public:
  explicit QueuedRequest(std::future<void> done) : done_(std::move(done)) {}
  ~QueuedRequest() override {
    if (!done_.valid()) return;
    try {
      done_.get();
    } catch (const std::exception& e) {
      dtnn::log_warning(std::string("an unwaited allreduce failed: ") + e.what());
    }
  }
  void wait() override {
    if (done_.valid()) done_.get();  // rethrows the collective's error
  }
  bool test() override {
    return !done_.valid() || done_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::future<void> done_;
};

}  // namespace

CollectiveQueue::CollectiveQueue() : worker_([this] { run_jobs(); }) {}

CollectiveQueue::~CollectiveQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

std::future<void> CollectiveQueue::enqueue(std::string_view name, Collective collective) {
  const std::uint64_t seq = ++seq_;
  Job job;
  job.work = [this, seq, name = std::string(name), collective = std::move(collective)] {
    if (!failed_.empty()) throw dtnn::Error(failed_);
    try {
      collective(seq, Deadline::after(timeout_));
    } catch (const std::exception& e) {
      failed_ = std::string(e.what()) + " (collective #" + std::to_string(seq) + " '" + name + "')";
      throw dtnn::Error(failed_);
    }
  };
  std::future<void> done = job.done.get_future();
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return done;
}

std::unique_ptr<dtnn::CommRequest> CollectiveQueue::start(std::string_view name,
                                                          Collective collective) {
  return std::make_unique<QueuedRequest>(enqueue(name, std::move(collective)));
}

void CollectiveQueue::run_jobs() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    try {
      job.work();
      job.done.set_value();
    } catch (...) {
      job.done.set_exception(std::current_exception());
    }
  }
}

}  // namespace dtnn_net
