// Communicator: the collectives data-parallel training needs. LocalCommunicator is the
// one-process implementation in the core; mpi and nccl are plugins.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

// A non-blocking operation in flight; wait() completes it. test() lets the library make progress
// and says whether it has completed (MPI progresses non-blocking collectives only inside calls).
class DTNN_CORE_EXPORT CommRequest {
 public:
  virtual ~CommRequest();
  virtual void wait() = 0;
  virtual bool test() = 0;
};

class DTNN_CORE_EXPORT Communicator : public Plugin {
 public:
  ~Communicator() override;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sum over ranks, in place, count elements of dtype at data.
  virtual void allreduce_sum(void* data, std::size_t count, DType dtype) = 0;
  virtual std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count,
                                                      DType dtype) = 0;
  virtual void broadcast(void* data, std::size_t count, DType dtype, int root) = 0;
  // recv holds size() * count elements; rank r's send lands at recv + r * count.
  virtual void allgather(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  virtual void barrier() = 0;
  // One line for `dtnn info` and logs: rank, size, host, library.
  virtual std::string describe() const = 0;
};

// Ends the whole job (every rank) with this exit code. The mpi plugin installs MPI_Abort here, so
// an error on one rank does not leave the others waiting in a collective; without a handler it is
// std::exit.
using JobAbortHandler = void (*)(int code);
DTNN_CORE_EXPORT void set_job_abort_handler(JobAbortHandler handler);
[[noreturn]] DTNN_CORE_EXPORT void abort_job(int code);
// True when a job abort handler is installed (the process is one of several ranks).
DTNN_CORE_EXPORT bool job_has_other_ranks();

class DTNN_CORE_EXPORT LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(void*, std::size_t, DType) override {}
  std::unique_ptr<CommRequest> iallreduce_sum(void*, std::size_t, DType) override;
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void* send, void* recv, std::size_t count, DType dtype) override;
  void barrier() override {}
  std::string describe() const override;
};

}  // namespace dtnn
