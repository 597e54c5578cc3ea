// cuda_multi_head_attention: the CPU layer's self-attention on the GPU (multi_head_attention.cpp
// has the formulas), with the same parameters ([Q K V] = x Wqkv + bqkv, y = C Wo + bo) and the
// same masks: a causal one, and the keys past each sequence's padding (the lengths the embedding
// twin writes on the host, uploaded once per batch). Self-attention and cross-attention (an
// encoder_decoder's decoder: K and V from the decoder memory, whose gradient it adds to). cuBLAS
// does the projections and, per head, a strided batch over the samples for S = Q_h K_h^T / sqrt(d)
// and C_h = P V_h; a thread block per row of S takes its masked softmax. Backward mirrors it:
//   dV_h = P^T G,  dP = G V_h^T,  dS = P * (dP - rowsum(dP * P)) / sqrt(d),
//   dQ_h = dS K_h,  dK_h = dS^T Q_h.
// The whole T x S score matrix is computed even when causal (its masked half becomes 0), and kept
// from forward for backward, [N, H, T, S], as on the CPU.
#include <cmath>
#include <memory>
#include <vector>

#include "block_reduce.cuh"
#include "cuda_dense.hpp"
#include "cuda_plugin.hpp"
#include "cuda_sequence_lengths.hpp"
#include "launch.cuh"
#include "multi_head_attention_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// The keys row i of sample n sees: all before its padding (at least one), and when causal only
// keys 0..i.
__device__ inline std::int64_t seen_by(std::int64_t i, std::int64_t n, const std::int64_t* lengths,
                                       std::int64_t keys, bool causal) {
  const std::int64_t valid = length_of(lengths, n, keys);
  return causal ? (i + 1 < valid ? i + 1 : valid) : valid;
}

// Rows of S [N, H, T, S], a block each: softmax over the seen keys, 0 past them.
template <class T>
__global__ void softmax_kernel(T* p, std::int64_t rows, std::int64_t heads, std::int64_t t,
                               std::int64_t s, const std::int64_t* lengths, bool causal) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* row = p + r * s;
    const std::int64_t seen = seen_by(r % t, r / (heads * t), lengths, s, causal);
    T mx = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < seen; j += blockDim.x) mx = row[j] > mx ? row[j] : mx;
    mx = block_max(mx);
    T sum = 0;
    for (std::int64_t j = threadIdx.x; j < seen; j += blockDim.x) {
      const T e = exp(row[j] - mx);
      row[j] = e;
      sum += e;
    }
    const T inv = T(1) / block_sum(sum);
    for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x)
      row[j] = j < seen ? row[j] * inv : T(0);
  }
}

// dS = P * (dP - rowsum(dP * P)) * scale, in place of dP (P is 0 past the seen keys).
template <class T>
__global__ void softmax_backward_kernel(T* ds, const T* p, std::int64_t rows, std::int64_t s,
                                        T scale) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* d = ds + r * s;
    const T* pr = p + r * s;
    T dot = 0;
    for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x) dot += d[j] * pr[j];
    dot = block_sum(dot);
    for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x) d[j] = pr[j] * (d[j] - dot) * scale;
  }
}

class CudaMultiHeadAttention final : public layer_parameters::MultiHeadAttentionBase {
 public:
  using MultiHeadAttentionBase::MultiHeadAttentionBase;
  std::string attributes() const override { return params_.attributes() + " cublas"; }

  void build(const LayerBuildContext& ctx) override {
    build_attention(ctx, Device::cuda);
    build_probabilities(ctx, Device::cuda);  // always: "kernel" is the CPU plugin's
    dtype_ = ctx.dtype;
    dprobs_ = Tensor::empty(probs_.shape(), dtype_, Layout::nchw, Device::cuda);
    device_lengths_ = std::make_unique<DeviceLengths>(lengths_, ctx.max_batch);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t n = x.dim(0);
    if (n == 0) return;
    Context& cx = Context::get();
    const cublasHandle_t h = cx.cublas();
    project(x.raw(), n * t_, d_, wq_, bq_, q_.raw());
    if (params_.cross) {
      if (memory_->value.dim(0) < n)
        throw Error("multi_head_attention: the decoder memory holds " +
                    std::to_string(memory_->value.dim(0)) + " samples, the input " +
                    std::to_string(n));
      project(memory_->value.raw(), n * s_, dm_, wkv_, bkv_, kv_.raw());
    }
    const std::int64_t* lengths = device_lengths_->upload(n, "multi_head_attention");
    const Strides l = strides();
    const std::int64_t heads = params_.heads, ts = t_ * s_;
    const std::size_t bytes = dtype_size(dtype_);
    const double scale = 1.0 / std::sqrt(double(head_));
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      // S^T [S, T] = K_h Q_h^T (column-major), a sample per batch entry.
      gemm_batched(h, dtype_, CUBLAS_OP_T, CUBLAS_OP_N, s_, t_, head_, scale,
                   at(keys(), l.k + hd * head_, bytes), l.ldkv, s_ * l.ldkv,
                   at(q_.raw(), hd * head_, bytes), l.ldq, t_ * l.ldq, 0.0,
                   at(probs_.raw(), hd * ts, bytes), s_, heads * ts, n);
    }
    const std::int64_t rows = n * heads * t_;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      softmax_kernel<<<row_blocks(rows), 128, 0, cx.stream()>>>(
          static_cast<T*>(probs_.raw()), rows, heads, t_, s_, lengths, params_.causal);
    });
    check_launch();
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      // C_h^T [d, T] = V_h^T P^T.
      gemm_batched(h, dtype_, CUBLAS_OP_N, CUBLAS_OP_N, head_, t_, s_, 1.0,
                   at(keys(), l.v + hd * head_, bytes), l.ldkv, s_ * l.ldkv,
                   at(probs_.raw(), hd * ts, bytes), s_, heads * ts, 0.0,
                   at(context_.raw(), hd * head_, bytes), e_, t_ * e_, n);
    }
    project(context_.raw(), n * t_, e_, wo_, bo_, y.raw());
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const std::int64_t n = x.dim(0);
    if (n == 0) return;
    Context& cx = Context::get();
    const cublasHandle_t h = cx.cublas();
    project_backward(context_.raw(), dy.raw(), n * t_, e_, wo_, bo_, dcontext_.raw());
    const Strides l = strides();
    const std::int64_t heads = params_.heads, ts = t_ * s_;
    const std::size_t bytes = dtype_size(dtype_);
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      const void* g = at(dcontext_.raw(), hd * head_, bytes);
      const void* p = at(probs_.raw(), hd * ts, bytes);
      // dV_h^T [d, S] = G^T P;  dP^T [S, T] = V_h G^T.
      gemm_batched(h, dtype_, CUBLAS_OP_N, CUBLAS_OP_T, head_, s_, t_, 1.0, g, e_, t_ * e_, p, s_,
                   heads * ts, 0.0, at(key_gradients(), l.v + hd * head_, bytes), l.ldkv,
                   s_ * l.ldkv, n);
      gemm_batched(h, dtype_, CUBLAS_OP_T, CUBLAS_OP_N, s_, t_, head_, 1.0,
                   at(keys(), l.v + hd * head_, bytes), l.ldkv, s_ * l.ldkv, g, e_, t_ * e_, 0.0,
                   at(dprobs_.raw(), hd * ts, bytes), s_, heads * ts, n);
    }
    const std::int64_t rows = n * heads * t_;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      softmax_backward_kernel<<<row_blocks(rows), 128, 0, cx.stream()>>>(
          static_cast<T*>(dprobs_.raw()), static_cast<const T*>(probs_.raw()), rows, s_,
          T(1.0 / std::sqrt(double(head_))));
    });
    check_launch();
    for (std::int64_t hd = 0; hd < heads; ++hd) {
      const void* ds = at(dprobs_.raw(), hd * ts, bytes);
      // dQ_h^T [d, T] = K_h^T dS^T;  dK_h^T [d, S] = Q_h^T dS.
      gemm_batched(h, dtype_, CUBLAS_OP_N, CUBLAS_OP_N, head_, t_, s_, 1.0,
                   at(keys(), l.k + hd * head_, bytes), l.ldkv, s_ * l.ldkv, ds, s_, heads * ts,
                   0.0, at(dq_.raw(), hd * head_, bytes), l.ldq, t_ * l.ldq, n);
      gemm_batched(h, dtype_, CUBLAS_OP_N, CUBLAS_OP_T, head_, s_, t_, 1.0,
                   at(q_.raw(), hd * head_, bytes), l.ldq, t_ * l.ldq, ds, s_, heads * ts, 0.0,
                   at(key_gradients(), l.k + hd * head_, bytes), l.ldkv, s_ * l.ldkv, n);
    }
    project_backward(x.raw(), dq_.raw(), n * t_, d_, wq_, bq_, dx ? dx->raw() : nullptr);
    if (params_.cross)  // dm += d[K V] Wkv^T: the decoder's cross-attention layers all add to it
      dense::backward(dtype_, memory_->value.raw(), dkv_.raw(), n * s_, dm_, wkv_.value.raw(),
                      2 * e_, wkv_.grad.raw(), params_.use_bias ? bkv_.grad.raw() : nullptr,
                      memory_->grad.raw(), /*accumulate_input_gradient=*/true);
  }

 private:
  // Where Q, K and V sit: row strides of the query and key-value buffers ([N, T, ldq] and
  // [N, S, ldkv]) and K's and V's columns in the latter (self: the one [Q K V] buffer).
  struct Strides {
    std::int64_t ldq, ldkv, k, v;
  };
  Strides strides() const {
    if (params_.cross) return {e_, 2 * e_, 0, e_};
    return {3 * e_, 3 * e_, e_, 2 * e_};
  }
  void* keys() { return params_.cross ? kv_.raw() : q_.raw(); }
  void* key_gradients() { return params_.cross ? dkv_.raw() : dq_.raw(); }

  static void* at(void* base, std::int64_t elements, std::size_t bytes) {
    return static_cast<std::byte*>(base) + elements * std::int64_t(bytes);
  }

  // out [rows, w.cols] = in [rows, width] w (+ b), and its gradients (cuda_dense.hpp).
  void project(const void* in, std::int64_t rows, std::int64_t width, const Parameter& w,
               const Parameter& b, void* out) const {
    dense::forward(dtype_, in, rows, width, w.value.raw(), w.value.dim(1),
                   params_.use_bias ? b.value.raw() : nullptr, out);
  }
  void project_backward(const void* in, const void* g, std::int64_t rows, std::int64_t width,
                        const Parameter& w, const Parameter& b, void* din) const {
    dense::backward(dtype_, in, g, rows, width, w.value.raw(), w.value.dim(1), w.grad.raw(),
                    params_.use_bias ? b.grad.raw() : nullptr, din);
  }

  DType dtype_ = DType::float32;
  std::unique_ptr<DeviceLengths> device_lengths_;  // lengths_ on the GPU
  Tensor dprobs_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaMultiHeadAttention(p); }

}  // namespace

// The CPU layer's self-attention cases: one and several heads, heads narrower and wider than
// D / H, causal (across more positions than a thread block has threads), no biases, padded
// sequences (with a causal mask too).
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"heads": 2}, "input_nchw": [5, 4]},
    {"params": {"heads": 3, "head_width": 2}, "input_nchw": [5, 4]},
    {"params": {"heads": 1, "causal": true, "use_bias": false}, "input_nchw": [6, 3]},
    {"params": {"heads": 2, "causal": true}, "input_nchw": [140, 4]},
    {"params": {"heads": 2}, "input_nchw": [5, 4], "lengths": [3, 5, 1, 4]},
    {"params": {"heads": 1, "causal": true}, "input_nchw": [6, 2], "lengths": [4, 2, 6, 1]}]})";

DTNN_CUDA_LAYER("multi_head_attention",
                "multi-head scaled dot-product attention on an NVIDIA GPU (cuBLAS): self (causal "
                "optional) or cross (a decoder's memory); padding masked",
                dtnn::layer_parameters::kMultiHeadAttentionParameters, kTwinChecks, create)
