// DeviceCommunicator: collectives on device memory, queued on the device's streams (NCCL), so
// that gradients never leave the GPU and the host never waits for them.
//
// A plugin of kind "device_communicator" named "<device>_<library>" (plugins/cuda/nccl is
// "cuda_nccl"). It works beside the host Communicator, which launched the job: that one carries
// what the device library needs to start (NCCL's unique id) and keeps the host-side collectives
// (metric totals, barriers, the fault watch).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "dtnn/communicator.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT DeviceCommunicator : public Plugin {
 public:
  ~DeviceCommunicator() override;
  // Joins every rank of `host` (a collective over it). Needs the device runtime opened first.
  virtual void open(Communicator& host) = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sum over ranks, in place, count elements of dtype in device memory. The reduction starts
  // after the work already issued on the device's compute stream and runs on its own stream;
  // wait() makes compute issued afterwards wait for it (the host does not block); test() says
  // whether it has completed.
  virtual std::unique_ptr<CommRequest> iallreduce_sum(void* data, std::size_t count, DType dtype,
                                                      std::string_view name) = 0;
  // Every rank takes root's count elements at data; ordered like iallreduce_sum, and complete
  // on the compute stream when it returns.
  virtual void broadcast(void* data, std::size_t count, DType dtype, int root,
                         std::string_view name) = 0;
  // One line for `dtnn info` and logs: the library, its version, rank and size.
  virtual std::string describe() const = 0;
};

// NCCL takes one device per rank. A collective over host: every rank tells the others its host
// and device ordinal; the answer, the same on every rank, names two ranks that share a device
// ("ranks 0 and 1 both use GPU 0 of host n1"), or is empty.
DTNN_CORE_EXPORT std::string ranks_sharing_a_device(Communicator& host, int ordinal);

}  // namespace dtnn
