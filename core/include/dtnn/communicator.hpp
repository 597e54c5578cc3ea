// Communicator: the collectives data-parallel training needs. LocalCommunicator is the
// one-process implementation in the core; mpi and nccl are plugins.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// Every collective is named ("gradients, bucket 3", "epoch totals") so that a fault report can say
// where a job stopped; the communicator numbers collectives in call order, which all ranks share.
class DTNN_CORE_EXPORT Communicator : public Plugin {
 public:
  ~Communicator() override;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sum over ranks, in place, count elements of dtype at data.
  virtual void allreduce_sum(void* data, std::size_t count, DType dtype, std::string_view name) = 0;
  virtual std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                                      std::string_view name) = 0;
  virtual void broadcast(void* data, std::size_t count, DType dtype, int root,
                         std::string_view name) = 0;
  // recv holds size() * count elements; rank r's send lands at recv + r * count.
  virtual void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                         std::string_view name) = 0;
  // send holds size() * count elements, block j (at send + j * count) for rank j; recv holds
  // size() * count, rank r's block for this rank landing at recv + r * count. The default gathers
  // every rank's whole send (size() times the bytes an all-to-all moves) and keeps its blocks;
  // a communicator with an all-to-all of its own overrides it.
  virtual void alltoall(const void* send, void* recv, std::size_t count, DType dtype,
                        std::string_view name);
  virtual void barrier(std::string_view name) = 0;
  // The longest one rank waits in one collective (parallel.timeout_s). Past it the rank reports
  // the collective and the ranks that have not reached it, and ends the job. 0: wait forever.
  virtual void set_timeout(double /*seconds*/) {}
  // True when the collectives take pointers to memory of device d (CUDA-aware MPI): the caller
  // must have finished the device work that writes them (DeviceRuntime::synchronize).
  virtual bool accepts_memory_of(Device d) const { return d == Device::cpu; }
  // Federated runs (parallel.model_sync_participation "avail2all"): asks the communicator to go on
  // when a rank leaves (its connection closes, or it stays silent) instead of failing. A rank that
  // left then adds nothing to every later sum and zeros to every allgather (the trainer learns who
  // is left from that); a broadcast from it fails. False where ranks cannot leave (an MPI job, one
  // process): then a lost rank ends the run, as before the call.
  virtual bool let_ranks_leave() { return false; }
  // One line for `dtnn info` and logs: rank, size, host, library.
  virtual std::string describe() const = 0;
};

// Every rank's text, in rank order (each cut to max_chars), gathered as character codes with one
// allgather: every rank must call it.
DTNN_CORE_EXPORT std::vector<std::string> allgather_text(Communicator& comm,
                                                         const std::string& text,
                                                         std::size_t max_chars,
                                                         std::string_view name);

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
  void allreduce_sum(void*, std::size_t, DType, std::string_view) override {}
  std::unique_ptr<CommRequest> iallreduce_sum(void*, std::size_t, DType, std::string_view) override;
  void broadcast(void*, std::size_t, DType, int, std::string_view) override {}
  void allgather(const void* send, void* recv, std::size_t count, DType dtype,
                 std::string_view) override;
  void barrier(std::string_view) override {}
  std::string describe() const override;
};

}  // namespace dtnn
