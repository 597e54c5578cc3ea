// Ranks of one process, a thread each: a Communicator per rank whose collectives meet in shared
// memory, for tests of code that runs on several ranks (codecs, exchanges) without a network or an
// MPI job. Sums add in rank order, as the real communicators' do. A rank that waits longer than the
// timeout in a collective gets an Error naming it, so a test whose ranks part ways fails instead of
// hanging.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "dtnn/communicator.hpp"

namespace dtnn::testing {

class ThreadGroup {
 public:
  explicit ThreadGroup(int size, double timeout_s = 30);
  ~ThreadGroup();
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  int size() const;
  Communicator& rank(int r);
  // Runs f(rank r's communicator, r) on a thread per rank; rethrows the first error (the other
  // ranks' collectives then fail at once). A group whose run failed stays broken.
  void run(const std::function<void(Communicator&, int)>& f);

  struct Shared;

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Communicator>> ranks_;
};

}  // namespace dtnn::testing
