// Communicator: the collectives data-parallel training needs. LocalCommunicator is the
// one-process implementation in the core; mpi and nccl are plugins.
#pragma once
#include <cstddef>
#include <memory>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

// A non-blocking operation in flight; wait() completes it.
class DTNN_CORE_EXPORT CommRequest {
 public:
  virtual ~CommRequest();
  virtual void wait() = 0;
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
};

class DTNN_CORE_EXPORT LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(void*, std::size_t, DType) override {}
  std::unique_ptr<CommRequest> iallreduce_sum(void*, std::size_t, DType) override;
  void broadcast(void*, std::size_t, DType, int) override {}
  void allgather(const void* send, void* recv, std::size_t count, DType dtype) override;
  void barrier() override {}
};

}  // namespace dtnn
