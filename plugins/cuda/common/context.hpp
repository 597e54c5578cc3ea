// Context: the process's GPU (one per rank) and what every CUDA plugin shares on it: the compute
// stream all work is ordered on, a copy stream for input batches, the cuDNN and cuBLAS handles,
// the caching allocator, and one scratch workspace for cuDNN (layers run one at a time).
//
// It lives in libdtnn_cuda.so, which every CUDA plugin links, so that there is one per process;
// the device plugin opens it (DeviceRuntime::open) before any layer is built.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <memory>
#include <string>

#include "caching_allocator.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::cuda {

struct Options {
  bool tf32 = false;      // TF32 tensor-core math for float32 (convolutions and fc)
  bool auto_conv = true;  // cuDNN's search picks each convolution's algorithms
  // The most scratch memory one convolution algorithm may use; 0: an eighth of the GPU's memory.
  std::size_t workspace_limit = 0;
};

// True when a CUDA device can be used; else false with the reason (no driver, no device).
bool probe(std::string& why_not);
// The CUDA runtime, cuDNN, cuBLAS and NCCL versions this build runs with, one line.
std::string library_versions();

class Context {
 public:
  static Context& get();  // the opened context; an Error when the device plugin has not opened it
  static Context& open(int local_rank, const Options& options);
  static bool is_open();

  int ordinal() const { return ordinal_; }
  const Options& options() const { return options_; }
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  CachingAllocator& allocator() { return *allocator_; }
  // Device memory owned by the returned pointer (released into the cache).
  std::shared_ptr<std::byte> allocate(std::size_t bytes);

  // The shared cuDNN scratch: grows at build time only (layers reserve what they chose).
  void reserve_workspace(std::size_t bytes);
  void* workspace() const { return workspace_.get(); }
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // DeviceRuntime::upload_async: one batch's copies on the copy stream, after the compute work
  // issued before the previous call, and before the compute stream's next work.
  void upload_async(std::initializer_list<DeviceRuntime::Upload> parts);
  void synchronize();
  std::string describe() const;

  ~Context();

 private:
  Context(int ordinal, const Options& options);

  int ordinal_ = 0;
  Options options_;
  cudaStream_t stream_ = nullptr, copy_stream_ = nullptr;
  cudaEvent_t copied_ = nullptr;
  cudaEvent_t issued_[2] = {nullptr, nullptr};  // compute issued before the last two uploads
  int upload_ = 0;                              // which of issued_ the next upload records
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<CachingAllocator> allocator_;
  std::shared_ptr<std::byte> workspace_;
  std::size_t workspace_bytes_ = 0;
};

// cuDNN's data type for a dtnn dtype.
inline cudnnDataType_t cudnn_type(DType t) {
  return t == DType::float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

}  // namespace dtnn::cuda
