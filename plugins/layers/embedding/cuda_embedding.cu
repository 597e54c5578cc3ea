// cuda_embedding: the CPU layer's y[n, t] = w[x[n, t]] on the GPU. Each forward copies the batch's
// ids to the host (a few kilobytes; the one wait of the layer): they are checked there and give
// the padded samples' lengths as on the CPU (token_ids.hpp), and the rows backward adds into are
// grouped there, by id, in position order. Backward then runs a thread block per distinct id
// that adds its positions' dy in that order: no atomics, the same sums every run, as the CPU
// layer's serial loop.
#include <algorithm>
#include <numeric>
#include <vector>

#include "cuda_plugin.hpp"
#include "embedding_base.hpp"
#include "launch.cuh"
#include "token_ids.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, const T* ids, const T* w, std::size_t n, std::int64_t units) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t token = std::int64_t(i) / units, j = std::int64_t(i) % units;
    y[i] = w[static_cast<std::int64_t>(ids[token]) * units + j];
  }
}

// Block b: dw[row b] += the dy of the positions of its id, in order. groups: [rows, offsets
// (rows + 1), positions].
template <class T>
__global__ void backward_kernel(T* dw, const T* dy, const int* rows, const int* offsets,
                                const int* positions, std::int64_t units) {
  const int b = blockIdx.x;
  T* out = dw + std::int64_t(rows[b]) * units;
  for (std::int64_t j = threadIdx.x; j < units; j += blockDim.x) {
    T sum = 0;
    for (int k = offsets[b]; k < offsets[b + 1]; ++k)
      sum += dy[std::int64_t(positions[k]) * units + j];
    out[j] += sum;
  }
}

class CudaEmbedding final : public layer_parameters::EmbeddingBase {
 public:
  using EmbeddingBase::EmbeddingBase;

  void build(const LayerBuildContext& ctx) override {
    build_table(ctx, Device::cuda);
    dtype_ = ctx.dtype;
    reserve(ctx.max_batch * input_.numel());
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t tokens = x.numel();
    if (tokens == 0) return;
    reserve(tokens);
    Context& cx = Context::get();
    DTNN_CUDA(
        cudaMemcpyAsync(ids_.data(), x.raw(), x.bytes(), cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      const T* ids = reinterpret_cast<const T*>(ids_.data());
      token_ids::check(ids, tokens, s_.vocab);
      if (lengths_) token_ids::write_lengths(*lengths_, ids, x.dim(0), input_[0], s_.padding_id);
      group_by_id(ids, tokens);
      const auto n = static_cast<std::size_t>(tokens * s_.units);
      forward_kernel<<<blocks(n), kThreads, 0, cx.stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), static_cast<const T*>(w_.raw()),
          n, s_.units);
    });
    check_launch();
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx) dx->fill_zero();
    if (x.numel() == 0 || distinct_ == 0) return;
    const int* groups = reinterpret_cast<const int*>(groups_.get());
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      backward_kernel<<<unsigned(distinct_), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dw_.raw()), static_cast<const T*>(dy.raw()), groups, groups + distinct_,
          groups + 2 * distinct_ + 1, s_.units);
    });
    check_launch();
  }

 private:
  // Room for a batch of `tokens` ids on the host and their groups on the device.
  void reserve(std::int64_t tokens) {
    if (tokens <= capacity_) return;
    capacity_ = tokens;
    ids_.assign(std::size_t(tokens) * (dtype_ == DType::float64 ? 8 : 4), 0);
    groups_ = Context::get().allocate(std::size_t(3 * tokens + 1) * sizeof(int));
  }

  // The positions grouped by id, uploaded as [rows, offsets, positions] for backward.
  template <class T>
  void group_by_id(const T* ids, std::int64_t tokens) {
    order_.resize(std::size_t(tokens));
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return ids[a] < ids[b]; });
    rows_.clear();
    offsets_.clear();
    for (std::int64_t k = 0; k < tokens; ++k)
      if (k == 0 || ids[order_[k]] != ids[order_[k - 1]]) {
        rows_.push_back(static_cast<int>(ids[order_[k]]));
        offsets_.push_back(static_cast<int>(k));
      }
    offsets_.push_back(static_cast<int>(tokens));
    distinct_ = std::int64_t(rows_.size());
    host_groups_.clear();
    host_groups_.insert(host_groups_.end(), rows_.begin(), rows_.end());
    host_groups_.insert(host_groups_.end(), offsets_.begin(), offsets_.end());
    host_groups_.insert(host_groups_.end(), order_.begin(), order_.end());
    DTNN_CUDA(cudaMemcpyAsync(groups_.get(), host_groups_.data(), host_groups_.size() * sizeof(int),
                              cudaMemcpyHostToDevice, Context::get().stream()));
  }

  DType dtype_ = DType::float32;
  std::vector<unsigned char> ids_;  // the batch's ids, on the host
  std::vector<int> order_, rows_, offsets_, host_groups_;
  std::int64_t distinct_ = 0, capacity_ = 0;
  std::shared_ptr<std::byte> groups_;  // int [rows, offsets, positions] on the device
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaEmbedding(p); }

}  // namespace

// Repeated ids (backward adds several positions into one row), and padding.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"vocab": 7, "units": 5}, "input_nchw": [6], "tokens": 7},
    {"params": {"vocab": 50, "units": 300}, "input_nchw": [40], "tokens": 9},
    {"params": {"vocab": 7, "units": 5, "padding_id": 0}, "input_nchw": [6], "tokens": 7}]})";

DTNN_CUDA_LAYER("embedding", "token ids to learned vectors on an NVIDIA GPU: y[n, t] = w[x[n, t]]",
                dtnn::layer_parameters::kEmbeddingParameters, kTwinChecks, create)
