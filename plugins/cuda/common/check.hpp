// Error checks for CUDA, cuDNN and cuBLAS calls: a failure becomes a dtnn::Error naming the call,
// the library's message and the source line.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

namespace dtnn::cuda {

[[noreturn]] void fail(const char* library, const char* message, const char* call, const char* file,
                       int line);

}  // namespace dtnn::cuda

#define DTNN_CUDA(call)                                                                  \
  do {                                                                                   \
    const cudaError_t dtnn_e = (call);                                                   \
    if (dtnn_e != cudaSuccess)                                                           \
      ::dtnn::cuda::fail("CUDA", cudaGetErrorString(dtnn_e), #call, __FILE__, __LINE__); \
  } while (0)
#define DTNN_CUDNN(call)                                                                   \
  do {                                                                                     \
    const cudnnStatus_t dtnn_s = (call);                                                   \
    if (dtnn_s != CUDNN_STATUS_SUCCESS)                                                    \
      ::dtnn::cuda::fail("cuDNN", cudnnGetErrorString(dtnn_s), #call, __FILE__, __LINE__); \
  } while (0)
#define DTNN_CUBLAS(call)                                                                     \
  do {                                                                                        \
    const cublasStatus_t dtnn_s = (call);                                                     \
    if (dtnn_s != CUBLAS_STATUS_SUCCESS)                                                      \
      ::dtnn::cuda::fail("cuBLAS", cublasGetStatusString(dtnn_s), #call, __FILE__, __LINE__); \
  } while (0)
