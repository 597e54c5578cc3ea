// One double on the device that a loss kernel sums into, read back by the host: an 8-byte copy
// and the one wait of a training step (the loss value of the batch).
#pragma once
#include <cuda_runtime_api.h>

#include <memory>

#include "check.hpp"
#include "context.hpp"

namespace dtnn::cuda {

class DeviceSum {
 public:
  double* get() {
    if (!block_) block_ = Context::get().allocate(sizeof(double));
    return reinterpret_cast<double*>(block_.get());
  }
  // The sum, once the kernels issued so far have run.
  double read() {
    Context& cx = Context::get();
    double host = 0;
    DTNN_CUDA(cudaMemcpyAsync(&host, get(), sizeof host, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    return host;
  }

 private:
  std::shared_ptr<std::byte> block_;
};

}  // namespace dtnn::cuda
