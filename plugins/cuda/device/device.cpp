// device "cuda": the DeviceRuntime of NVIDIA GPUs (one per process, picked by its local rank).
// Memory comes from the caching allocator of the shared CUDA context (plugins/cuda/common).
#include "dtnn/device.hpp"

#include <cuda_runtime_api.h>

#include "check.hpp"
#include "context.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using dtnn::cuda::Context;

class CudaRuntime final : public DeviceRuntime {
 public:
  Device device() const override { return Device::cuda; }

  void open(int local_rank, const Params& options) override {
    cuda::Options o;
    if (options.has("tf32")) o.tf32 = options.get_bool("tf32");
    if (options.has("cudnn_auto_conv_alg")) o.auto_conv = options.get_bool("cudnn_auto_conv_alg");
    if (options.has("cudnn_workspace_mb"))
      o.workspace_limit =
          static_cast<std::size_t>(options.get_double("cudnn_workspace_mb") * 1048576.0);
    context_ = &Context::open(local_rank, o);
  }
  std::shared_ptr<std::byte> allocate(std::size_t bytes) override {
    return context().allocate(bytes);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    Context& c = context();
    DTNN_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, c.stream()));
    cudaPointerAttributes a{};
    DTNN_CUDA(cudaPointerGetAttributes(&a, dst));
    if (a.type != cudaMemoryTypeDevice) c.synchronize();  // the host may read it on return
  }
  void upload_async(std::initializer_list<Upload> parts) override { context().upload_async(parts); }
  void fill_zero(void* dst, std::size_t bytes) override {
    DTNN_CUDA(cudaMemsetAsync(dst, 0, bytes, context().stream()));
  }
  void scale(void* y, const void* x, std::size_t count, DType dtype, double alpha) override {
    cuda::kernels::scale(context().stream(), y, x, count, dtype, alpha);
  }
  void pin(void* host, std::size_t bytes) override {
    context();
    DTNN_CUDA(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
  }
  void unpin(void* host) override { DTNN_CUDA(cudaHostUnregister(host)); }
  void synchronize() override { context().synchronize(); }
  DeviceMemoryStats memory_stats() const override { return context().allocator().stats(); }
  std::string describe() const override { return context().describe(); }
  int ordinal() const override { return context().ordinal(); }

 private:
  Context& context() const {
    if (!context_) throw Error("device cuda: used before open()");
    return *context_;
  }
  Context* context_ = nullptr;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaRuntime(); }

// Unavailable: the reason, and the libraries this plugin would run with.
bool available(std::string& why_not) {
  if (cuda::probe(why_not)) return true;
  why_not += "; libraries: " + cuda::library_versions();
  return false;
}

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "device", .name = "cuda", .device = "cuda",
                   .description =
                       "NVIDIA GPU memory and copies: caching allocator, compute and copy streams",
                   .probe = available, .factory = create)
