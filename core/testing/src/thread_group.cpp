#include "dtnn/testing/thread_group.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "dtnn/error.hpp"

namespace dtnn::testing {

// Where the ranks meet: each posts a pointer, the last to arrive releases them all with every
// rank's pointer, valid until the rank's next meeting.
struct ThreadGroup::Shared {
  int size = 1;
  double timeout_s = 30;
  std::mutex mutex;
  std::condition_variable met;
  std::uint64_t generation = 0;
  int arrived = 0;
  bool broken = false;  // a rank gave up waiting: every later meeting fails
  std::vector<const void*> posted, released;

  std::vector<const void*> meet(int rank, const void* mine, std::string_view name) {
    std::unique_lock lock(mutex);
    if (broken)
      throw Error("thread group: rank " + std::to_string(rank) + " in " + std::string(name) +
                  " after another rank gave up");
    posted[static_cast<std::size_t>(rank)] = mine;
    const std::uint64_t mine_generation = generation;
    if (++arrived == size) {
      arrived = 0;
      released = posted;
      ++generation;
      met.notify_all();
      return released;
    }
    const auto timeout = std::chrono::duration<double>(timeout_s);
    if (!met.wait_for(lock, timeout, [&] { return generation != mine_generation || broken; }) ||
        broken) {
      broken = true;
      met.notify_all();
      throw Error("thread group: rank " + std::to_string(rank) + " waited " +
                  std::to_string(timeout_s) + " s in " + std::string(name) + " for " +
                  std::to_string(size - arrived) + " other ranks");
    }
    return released;
  }

  void abandon() {
    std::lock_guard lock(mutex);
    broken = true;
    met.notify_all();
  }
};

namespace {

class DoneRequest final : public CommRequest {
 public:
  void wait() override {}
  bool test() override { return true; }
};

class Rank final : public Communicator {
 public:
  Rank(std::shared_ptr<ThreadGroup::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_->size; }

  void allreduce_sum(void* data, std::size_t count, DType dtype, std::string_view name) override {
    const auto ranks = static_cast<std::size_t>(size());
    std::vector<unsigned char> all(ranks * count * dtype_size(dtype));
    allgather(data, all.data(), count, dtype, name);
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      const T* from = reinterpret_cast<const T*>(all.data());
      T* out = static_cast<T*>(data);
      for (std::size_t i = 0; i < count; ++i) {
        T sum = from[i];
        for (std::size_t r = 1; r < ranks; ++r) sum += from[r * count + i];
        out[i] = sum;
      }
    });
  }
  std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                              std::string_view name) override {
    allreduce_sum(data, count, dtype, name);
    return std::make_unique<DoneRequest>();
  }
  void broadcast(void* data, std::size_t count, DType dtype, int root,
                 std::string_view name) override {
    const auto at = shared_->meet(rank_, data, name);
    if (rank_ != root)
      std::memcpy(data, at[static_cast<std::size_t>(root)], count * dtype_size(dtype));
    shared_->meet(rank_, nullptr, name);  // root's data is read before it goes on
  }
  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view name) override {
    const std::size_t bytes = count * dtype_size(dtype);
    const auto at = shared_->meet(rank_, send, name);
    for (std::size_t r = 0; r < at.size(); ++r)
      std::memcpy(static_cast<unsigned char*>(recv) + r * bytes, at[r], bytes);
    shared_->meet(rank_, nullptr, name);  // every send is read before its rank goes on
  }
  void barrier(std::string_view name) override { shared_->meet(rank_, nullptr, name); }
  std::string describe() const override {
    return "rank " + std::to_string(rank_) + " of " + std::to_string(size()) +
           ", threads of one process";
  }

 private:
  std::shared_ptr<ThreadGroup::Shared> shared_;
  int rank_;
};

}  // namespace

ThreadGroup::ThreadGroup(int size, double timeout_s) : shared_(std::make_shared<Shared>()) {
  DTNN_CHECK(size >= 1, "a thread group of no ranks");
  shared_->size = size;
  shared_->timeout_s = timeout_s;
  shared_->posted.assign(static_cast<std::size_t>(size), nullptr);
  for (int r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(shared_, r));
}

ThreadGroup::~ThreadGroup() = default;

int ThreadGroup::size() const { return shared_->size; }

Communicator& ThreadGroup::rank(int r) { return *ranks_.at(static_cast<std::size_t>(r)); }

void ThreadGroup::run(const std::function<void(Communicator&, int)>& f) {
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int r = 0; r < size(); ++r)
    threads.emplace_back([&, r] {
      try {
        f(rank(r), r);
      } catch (...) {
        {
          std::lock_guard lock(mutex);
          if (!first) first = std::current_exception();
        }
        shared_->abandon();  // the other ranks stop waiting for this one
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace dtnn::testing
