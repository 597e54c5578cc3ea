#include "context.hpp"

#include <dlfcn.h>

#include <mutex>

#include "check.hpp"
#include "dtnn/error.hpp"

namespace dtnn::cuda {

void fail(const char* library, const char* message, const char* call, const char* file, int line) {
  throw Error(std::string(library) + " error: " + message + " in " + call + " (" + file + ":" +
              std::to_string(line) + ")");
}

namespace {

std::unique_ptr<Context>& the_context() {
  static std::unique_ptr<Context>* c = new std::unique_ptr<Context>;  // lives to the process end
  return *c;
}

std::string version(int v, int major_div, int minor_div, int minor_mod) {
  return std::to_string(v / major_div) + "." + std::to_string(v / minor_div % minor_mod);
}

// NCCL's version when its library can be loaded ("absent" otherwise): asked at run time, so that
// only the cuda_nccl plugin links NCCL and the other CUDA plugins build and run without it.
std::string nccl_version() {
  void* lib = dlopen("libnccl.so.2", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return "absent";
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"));
  int v = 0;
  const bool ok = get && get(&v) == 0;  // ncclSuccess
  dlclose(lib);
  if (!ok) return "unknown version";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

bool probe(std::string& why_not) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    why_not = std::string("no usable CUDA driver or GPU (") + cudaGetErrorName(e) + ": " +
              cudaGetErrorString(e) + ")";
    cudaGetLastError();  // clear it
    return false;
  }
  if (count == 0) {
    why_not = "no CUDA GPU found";
    return false;
  }
  return true;
}

std::string library_versions() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);  // 0 without a driver
  const std::size_t cudnn = cudnnGetVersion();
  std::string s = "CUDA runtime " + version(runtime, 1000, 10, 100) + ", driver " +
                  (driver ? "supports CUDA " + version(driver, 1000, 10, 100) : "absent") +
                  ", cuDNN " + std::to_string(cudnn / 10000) + "." +
                  std::to_string(cudnn / 100 % 100) + "." + std::to_string(cudnn % 100) +
                  ", NCCL " + nccl_version();
  int cublas = 0;
  if (cublasGetProperty(MAJOR_VERSION, &cublas) == CUBLAS_STATUS_SUCCESS) {
    int minor = 0;
    cublasGetProperty(MINOR_VERSION, &minor);
    s += ", cuBLAS " + std::to_string(cublas) + "." + std::to_string(minor);
  }
  return s;
}

Context& Context::get() {
  if (!the_context())
    throw Error("the CUDA device is not open: set \"device\": \"cuda\" in the experiment");
  return *the_context();
}

bool Context::is_open() { return the_context() != nullptr; }

Context& Context::open(int local_rank, const Options& options) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  if (!the_context()) {
    std::string why;
    if (!probe(why)) throw Error("device cuda: " + why);
    int count = 0;
    DTNN_CUDA(cudaGetDeviceCount(&count));
    the_context().reset(new Context(local_rank % count, options));
  }
  return *the_context();
}

Context::Context(int ordinal, const Options& options) : ordinal_(ordinal), options_(options) {
  DTNN_CUDA(cudaSetDevice(ordinal_));
  if (options_.workspace_limit == 0) {
    std::size_t free = 0, total = 0;
    DTNN_CUDA(cudaMemGetInfo(&free, &total));
    options_.workspace_limit = total / 8;
  }
  DTNN_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  DTNN_CUDA(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
  DTNN_CUDA(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
  for (cudaEvent_t& e : issued_) {
    DTNN_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    DTNN_CUDA(cudaEventRecord(e, stream_));  // nothing issued yet: complete at once
  }
  DTNN_CUDNN(cudnnCreate(&cudnn_));
  DTNN_CUDNN(cudnnSetStream(cudnn_, stream_));
  DTNN_CUBLAS(cublasCreate(&cublas_));
  DTNN_CUBLAS(cublasSetStream(cublas_, stream_));
  DTNN_CUBLAS(
      cublasSetMathMode(cublas_, options_.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  allocator_ = std::make_unique<CachingAllocator>(
      [](std::size_t bytes) -> void* {
        void* p = nullptr;
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
          cudaGetLastError();
          return nullptr;
        }
        return p;
      },
      [](void* p) { cudaFree(p); });
}

Context::~Context() {
  cudaStreamSynchronize(stream_);
  workspace_.reset();
  allocator_.reset();
  cublasDestroy(cublas_);
  cudnnDestroy(cudnn_);
  cudaEventDestroy(copied_);
  for (cudaEvent_t e : issued_) cudaEventDestroy(e);
  cudaStreamDestroy(copy_stream_);
  cudaStreamDestroy(stream_);
}

std::shared_ptr<std::byte> Context::allocate(std::size_t bytes) {
  auto* block = static_cast<std::byte*>(allocator_->allocate(bytes));
  CachingAllocator* allocator = allocator_.get();
  return std::shared_ptr<std::byte>(block, [allocator](std::byte* p) { allocator->release(p); });
}

void Context::reserve_workspace(std::size_t bytes) {
  if (bytes <= workspace_bytes_) return;
  workspace_.reset();  // back to the cache first: the new block may reuse it
  workspace_ = allocate(bytes);
  workspace_bytes_ = bytes;
}

void Context::upload_async(std::initializer_list<DeviceRuntime::Upload> parts) {
  // issued_[upload_] marks the compute issued before the previous call: the work that last read
  // the buffers written now. Then it is re-recorded to mark the compute issued before this call.
  DTNN_CUDA(cudaStreamWaitEvent(copy_stream_, issued_[1 - upload_], 0));
  DTNN_CUDA(cudaEventRecord(issued_[upload_], stream_));
  upload_ = 1 - upload_;
  for (const auto& p : parts)
    DTNN_CUDA(cudaMemcpyAsync(p.device, p.host, p.bytes, cudaMemcpyHostToDevice, copy_stream_));
  DTNN_CUDA(cudaEventRecord(copied_, copy_stream_));
  DTNN_CUDA(cudaStreamWaitEvent(stream_, copied_, 0));
}

void Context::synchronize() { DTNN_CUDA(cudaStreamSynchronize(stream_)); }

std::string Context::describe() const {
  cudaDeviceProp p{};
  DTNN_CUDA(cudaGetDeviceProperties(&p, ordinal_));
  std::size_t free = 0, total = 0;
  DTNN_CUDA(cudaMemGetInfo(&free, &total));
  int count = 0;
  DTNN_CUDA(cudaGetDeviceCount(&count));
  return "GPU " + std::to_string(ordinal_) + " of " + std::to_string(count) + ": " + p.name +
         ", compute capability " + std::to_string(p.major) + "." + std::to_string(p.minor) + ", " +
         std::to_string(total >> 20) + " MiB (" + std::to_string(free >> 20) + " MiB free), " +
         std::to_string(p.multiProcessorCount) + " SMs; " + library_versions() + "; TF32 " +
         (options_.tf32 ? "on" : "off") + ", cuDNN algorithm search " +
         (options_.auto_conv ? "on" : "off");
}

}  // namespace dtnn::cuda
