// multi_head_attention (Vaswani et al. 2017) over a sequence x: [N, T, D] with H heads of width
// d ("head_width"; 0: D / H, the usual), E = H d wide together. Self-attention takes queries, keys
// and values from x:
//   [Q K V] = x Wqkv + bqkv                        Wqkv: [D, 3E], one GEMM over all N*T rows
// cross-attention ("cross": true, in an encoder_decoder's decoder) its keys and values from the
// decoder memory m: [N, S, Dm] (the encoder's output, dtnn/sequence_context.hpp):
//   Q = x Wq + bq,  [K V] = m Wkv + bkv            Wq: [D, E], Wkv: [Dm, 2E]
// then, per sample and head:  S = Q_h K_h^T / sqrt(d),  P = softmax over each row of S,
//                             C_h = P V_h;   y = C Wo + bo    Wo: [E, D]
// (PyDTNN 3.x's d_k is the head width: its transformer_test has D = 300, 4 heads of 8.)
// A row sees the keys before its sequence's padding (the lengths an embedding with a padding id
// wrote; the memory's for cross-attention) and, when causal, only keys 0..i.
// Backward, per sample and head, with G = dC_h:
//   dV_h = P^T G,  dP = G V_h^T,  dS = P * (dP - rowsum(dP * P)) / sqrt(d),
//   dQ_h = dS K_h,  dK_h = dS^T Q_h;  then the projections' gradients, and for cross-attention
//   dm += d[K V] Wkv^T (several decoder blocks read one memory).
// Masked keys have P = 0, so they get no gradient without a test in the backward loops.
//
// Two kernels ("kernel"):
// - "stored": P is kept from forward for backward, [N, H, T, S]: the one O(T S) buffer. The
//   (sample, head) pairs run in parallel, each on one thread, through the GEMM (BLIS, or the small
//   kernels), the softmax fused with the scaling and the mask. Causal attention works in blocks of
//   query rows: block b multiplies only the keys up to its last row, so about half the products
//   of the full matrix are skipped; padding shortens every block to the sequence's keys.
// - "fused" (flash_attention.hpp): blocks of query rows by blocks of keys with an online softmax;
//   forward keeps one log-sum-exp per query row and backward computes the scores again, block by
//   block, so no buffer grows with T S. Forward runs the (pair, query block)s in parallel,
//   backward the pairs.
// "auto" takes "fused" where the probabilities of a batch would take kFusedFromBytes or more, and
// "stored" below: computing the scores again in backward costs more than keeping them (on AMD
// Zen 5, attention_bench, 1 thread: 4-12% of the layer's time at 128 to 4096 positions; at 4096
// positions x 2 the stored kernel keeps 512 MiB of probabilities, the fused one 128 KiB of
// log-sum-exps and 512 KiB of blocks a thread).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dtnn/dense.hpp"
#include "dtnn/fast_math.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/reductions.hpp"
#include "dtnn/sequence_context.hpp"
#include "flash_attention.hpp"
#include "multi_head_attention_base.hpp"

namespace {

using namespace dtnn;

// Query rows per block of causal attention, in both kernels.
constexpr std::int64_t kQueryBlock = flash_attention::kCausalQueryBlock;
// The scores the stored kernel's block of rows holds when not causal: 2 MiB in float32 (the whole
// T x S from T = S = 724; at T = 2048, 256 rows: 1 thread, AMD Zen 5, forward and backward 10%
// faster than all rows at once).
constexpr std::int64_t kStoredBlockScores = std::int64_t(1) << 19;
// "auto" fuses from this many bytes of a batch's probabilities on (i2c's slab_bytes default).
constexpr std::int64_t kFusedFromBytes = std::int64_t(256) << 20;

class MultiHeadAttention final : public layer_parameters::MultiHeadAttentionBase {
 public:
  using MultiHeadAttentionBase::MultiHeadAttentionBase;

  std::string attributes() const override {
    return params_.attributes() + (fused_ ? " fused" : "");
  }

  void build(const LayerBuildContext& ctx) override {
    build_attention(ctx, Device::cpu);
    const double probability_bytes = double(ctx.max_batch) * double(params_.heads) * double(t_) *
                                     double(s_) * double(dtype_size(ctx.dtype));
    fused_ = params_.kernel == "fused" ||
             (params_.kernel == "auto" && probability_bytes >= double(kFusedFromBytes));
    if (!fused_) build_probabilities(ctx, Device::cpu);
    precision_ = ctx.precision;
    if (params_.cross) dmemory_ = Tensor::empty(Shape{ctx.max_batch, s_, dm_}, ctx.dtype);
    const std::int64_t threads = std::max(1, omp_get_max_threads());
    if (fused_) {
      lse_ = Tensor::empty(Shape{ctx.max_batch, params_.heads, t_}, ctx.dtype);
      scratch_ = Tensor::empty(Shape{threads, flash_attention::kScratch}, ctx.dtype);
    } else {
      scratch_ = Tensor::empty(Shape{threads, block_rows(), s_}, ctx.dtype);
    }
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }

 private:
  // The share of the T x S products causal attention computes with query blocks.
  double attention_share() const override {
    if (!params_.causal) return 1.0;
    const std::int64_t blocks = (t_ + kQueryBlock - 1) / kQueryBlock;
    double done = 0;
    for (std::int64_t b = 0; b < blocks; ++b) done += double(std::min(t_, (b + 1) * kQueryBlock));
    return done * double(kQueryBlock) / double(t_ * t_);
  }
  // Keys that query row i of a sequence with `keys` unpadded keys sees.
  std::int64_t seen_by(std::int64_t i, std::int64_t keys) const {
    return params_.causal ? std::min(i + 1, keys) : keys;
  }
  // Query rows the stored kernel takes at a time: causal, kQueryBlock, so that a block skips the
  // keys its last row does not see; otherwise as many as keep a block's scores within
  // kStoredBlockScores, so that softmax's passes over them stay in cache.
  std::int64_t block_rows() const {
    if (params_.causal) return kQueryBlock;
    return std::min(t_, std::max(kQueryBlock, kStoredBlockScores / s_));
  }
  // The row strides of the query and key-value buffers ([N, T, ldq] and [N, S, ldkv]): Q, K and V
  // side by side in one buffer for self-attention, Q alone and K, V side by side for cross.
  std::int64_t ldq() const { return q_.dim(2); }
  std::int64_t ldkv() const { return params_.cross ? 2 * e_ : 3 * e_; }
  // Where pair nh (sample nh / heads, head nh % heads) starts in those buffers (K and V follow at
  // +0 and +E in the key-value one), and in the context's [N, T, E].
  std::int64_t q_offset(std::int64_t nh) const {
    return (nh / params_.heads) * t_ * ldq() + (nh % params_.heads) * head_;
  }
  std::int64_t kv_offset(std::int64_t nh) const {
    return (nh / params_.heads) * s_ * ldkv() + (nh % params_.heads) * head_;
  }
  std::int64_t context_offset(std::int64_t nh) const {
    return (nh / params_.heads) * t_ * e_ + (nh % params_.heads) * head_;
  }
  // The first key of the key-value buffer: K after Q in self-attention's combined one.
  template <class T>
  T* keys_base(Tensor& q, Tensor& kv) const {
    return params_.cross ? kv.data<T>() : q.data<T>() + e_;
  }
  // Sample n's unpadded keys.
  std::int64_t keys_of(std::int64_t n) const { return lengths_ ? lengths_->keys(n, s_) : s_; }

  // out[r, :] = in[r, :] w (+ b) for rows r, and its gradients (dtnn/dense.hpp); an undefined b
  // or db is no bias.
  template <class T>
  void project(const T* in, std::int64_t rows, std::int64_t width_in, const Parameter& w,
               const Parameter& b, T* out) const {
    dense::forward(in, rows, width_in, w.value.data<T>(), w.value.dim(1),
                   params_.use_bias ? b.value.data<T>() : nullptr, out, precision_);
  }
  template <class T>
  void project_backward(const T* in, const T* g, std::int64_t rows, std::int64_t width_in,
                        const Parameter& w, const Parameter& b, T* din) const {
    dense::backward(in, g, rows, width_in, w.value.data<T>(), w.value.dim(1), w.grad.data<T>(),
                    params_.use_bias ? b.grad.data<T>() : nullptr, din, precision_);
  }

  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    const std::int64_t n = x.dim(0), d = d_, e = e_;
    project(x.data<T>(), n * t_, d, wq_, bq_, q_.data<T>());
    if (params_.cross) {
      if (memory_->value.dim(0) < n)
        throw Error("multi_head_attention: the decoder memory holds " +
                    std::to_string(memory_->value.dim(0)) + " samples, the input " +
                    std::to_string(n));
      project(memory_->value.data<T>(), n * s_, dm_, wkv_, bkv_, kv_.data<T>());
    }
    if (fused_)
      fused_forward<T>(n);
    else
      stored_forward<T>(n);
    project(context_.data<T>(), n * t_, e, wo_, bo_, y.data<T>());
  }

  // One (sample, head) pair's operands for flash_attention.hpp.
  template <class T>
  flash_attention::Pair<T> pair(std::int64_t nh) {
    const T* k = keys_base<T>(q_, kv_) + kv_offset(nh);
    return {q_.data<T>() + q_offset(nh),
            ldq(),
            k,
            k + e_,
            ldkv(),
            context_.data<T>() + context_offset(nh),
            e_,
            t_,
            head_,
            keys_of(nh / params_.heads),
            params_.causal,
            T(1) / std::sqrt(T(head_)),
            precision_};
  }

  template <class T>
  void fused_forward(std::int64_t n) {
    const std::int64_t block = flash_attention::query_block(params_.causal);
    const std::int64_t blocks = (t_ + block - 1) / block;
    const std::int64_t tasks = n * params_.heads * blocks;
#pragma omp parallel for schedule(dynamic) if (tasks > 1)
    for (std::int64_t task = 0; task < tasks; ++task) {
      const std::int64_t nh = task / blocks, row = (task % blocks) * block;
      flash_attention::forward_block(
          pair<T>(nh), row, std::min(block, t_ - row), lse_.data<T>() + nh * t_,
          scratch_.data<T>() + omp_get_thread_num() * flash_attention::kScratch);
    }
  }

  template <class T>
  void stored_forward(std::int64_t n) {
    const std::int64_t e = e_;
    const T* qs = q_.data<T>();
    const T* ks = keys_base<T>(q_, kv_);
    T* context = context_.data<T>();
    T* probs = probs_.data<T>();
    const T scale = T(1) / std::sqrt(T(head_));
    const std::int64_t lq = ldq(), lkv = ldkv();
#pragma omp parallel for schedule(dynamic) if (n * params_.heads > 1)
    for (std::int64_t nh = 0; nh < n * params_.heads; ++nh) {
      const T* q = qs + q_offset(nh);
      const T* k = ks + kv_offset(nh);
      const T* v = k + e;
      T* p = probs + nh * t_ * s_;
      T* c = context + context_offset(nh);
      const std::int64_t valid = keys_of(nh / params_.heads);
      for (std::int64_t row = 0; row < t_; row += block_rows()) {
        const std::int64_t rows = std::min(block_rows(), t_ - row);
        const std::int64_t keys = seen_by(row + rows - 1, valid);
        T* pb = p + row * s_;
        gemm(precision_, false, true, rows, keys, head_, scale, q + row * lq, lq, k, lkv, T(0), pb,
             s_);
        for (std::int64_t i = 0; i < rows; ++i) softmax_row(pb + i * s_, seen_by(row + i, valid));
        gemm(precision_, false, false, rows, head_, keys, T(1), pb, s_, v, lkv, T(0), c + row * e,
             e);
      }
    }
  }

  // Softmax of the first `seen` values of a row of S; the rest (masked) become 0.
  template <class T>
  void softmax_row(T* __restrict r, std::int64_t seen) const {
    const T mx = reduce::max(r, seen);
    for (std::int64_t j = 0; j < seen; ++j) r[j] = fast::exp(r[j] - mx);
    const T inv = T(1) / reduce::sum(r, seen);
    for (std::int64_t j = 0; j < seen; ++j) r[j] *= inv;
    for (std::int64_t j = seen; j < s_; ++j) r[j] = T(0);
  }

  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    const std::int64_t n = x.dim(0);
    project_backward(context_.data<T>(), dy.data<T>(), n * t_, e_, wo_, bo_, dcontext_.data<T>());
    if (fused_)
      fused_backward<T>(n);
    else
      stored_backward<T>(n);
    project_backward(x.data<T>(), dq_.data<T>(), n * t_, d_, wq_, bq_,
                     dx ? dx->data<T>() : static_cast<T*>(nullptr));
    if (params_.cross) add_memory_gradient<T>(n);
  }

  template <class T>
  void fused_backward(std::int64_t n) {
    T* dks = keys_base<T>(dq_, dkv_);
#pragma omp parallel for schedule(dynamic) if (n * params_.heads > 1)
    for (std::int64_t nh = 0; nh < n * params_.heads; ++nh) {
      T* dk = dks + kv_offset(nh);
      flash_attention::backward_pair(
          pair<T>(nh), dcontext_.data<T>() + context_offset(nh), e_, lse_.data<T>() + nh * t_,
          dq_.data<T>() + q_offset(nh), dk, dk + e_, s_,
          scratch_.data<T>() + omp_get_thread_num() * flash_attention::kScratch);
    }
  }

  template <class T>
  void stored_backward(std::int64_t n) {
    const std::int64_t e = e_;
    T* dcontext = dcontext_.data<T>();
    const T* qs = q_.data<T>();
    const T* ks = keys_base<T>(q_, kv_);
    T* dqs = dq_.data<T>();
    T* dks = keys_base<T>(dq_, dkv_);
    const T* probs = probs_.data<T>();
    const T scale = T(1) / std::sqrt(T(head_));
    const std::int64_t lq = ldq(), lkv = ldkv();
#pragma omp parallel for schedule(dynamic) if (n * params_.heads > 1)
    for (std::int64_t nh = 0; nh < n * params_.heads; ++nh) {
      const T* q = qs + q_offset(nh);
      const T* k = ks + kv_offset(nh);
      const T* v = k + e;
      T* dq = dqs + q_offset(nh);
      T* dk = dks + kv_offset(nh);
      T* dv = dk + e;
      const T* p = probs + nh * t_ * s_;
      const T* g = dcontext + context_offset(nh);
      T* ds = scratch_.data<T>() + omp_get_thread_num() * block_rows() * s_;
      // Blocks add to dK and dV (keys past a block's, and past the padding, get nothing).
      for (std::int64_t j = 0; j < s_; ++j) {
        std::fill_n(dk + j * lkv, head_, T(0));
        std::fill_n(dv + j * lkv, head_, T(0));
      }
      const std::int64_t valid = keys_of(nh / params_.heads);
      for (std::int64_t row = 0; row < t_; row += block_rows()) {
        const std::int64_t rows = std::min(block_rows(), t_ - row);
        const std::int64_t keys = seen_by(row + rows - 1, valid);
        const T* pb = p + row * s_;
        gemm(precision_, true, false, keys, head_, rows, T(1), pb, s_, g + row * e, e, T(1), dv,
             lkv);
        gemm(precision_, false, true, rows, keys, head_, T(1), g + row * e, e, v, lkv, T(0), ds,
             s_);
        for (std::int64_t i = 0; i < rows; ++i) {
          const T* __restrict pr = pb + i * s_;
          T* __restrict dr = ds + i * s_;
          const T dot = reduce::dot(dr, pr, keys);
          for (std::int64_t j = 0; j < keys; ++j) dr[j] = pr[j] * (dr[j] - dot) * scale;
        }
        gemm(precision_, false, false, rows, head_, keys, T(1), ds, s_, k, lkv, T(0), dq + row * lq,
             lq);
        gemm(precision_, true, false, keys, head_, rows, T(1), ds, s_, q + row * lq, lq, T(1), dk,
             lkv);
      }
    }
  }

  // dm += d[K V] Wkv^T: the memory's gradient from this layer, added to the other readers'.
  template <class T>
  void add_memory_gradient(std::int64_t n) {
    T* dm = dmemory_.data<T>();
    project_backward(memory_->value.data<T>(), dkv_.data<T>(), n * s_, dm_, wkv_, bkv_, dm);
    T* __restrict out = memory_->grad.data<T>();
    parallel_for(n * s_ * dm_, kParallelGrain, [&](std::int64_t i) { out[i] += dm[i]; });
  }

  Precision precision_ = Precision::fp32;  // of the projections' and the scores' products
  bool fused_ = false;                     // flash_attention.hpp's kernel, or the stored one
  Tensor dmemory_;                         // [N, S, Dm] this layer's share of the memory's gradient
  Tensor lse_;      // [N, H, T] fused: each query row's log-sum-exp of its scores
  Tensor scratch_;  // per thread: stored, a block of rows' dS [block_rows(), S]; fused,
                    // flash_attention's blocks
};

Plugin* create(const Params& p, const PluginContext&) { return new MultiHeadAttention(p); }

}  // namespace

// Conformance: non-causal and causal, one and several heads, heads narrower and wider than
// D / H (self and cross); the causal case at 70 positions
// spans two query blocks; padded sequences (lengths, for batch + 2 samples), with a causal mask
// too; cross-attention to a memory of another length and width, padded. Then the fused kernel:
// padded, causal and padded, cross and padded, and over several blocks of query rows and keys
// (600 positions: ten causal blocks of rows or five, two blocks of keys; causal, and padded to
// 590 and 530 keys).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"heads": 2}, "input": [5, 4]},
    {"params": {"heads": 3, "head_width": 2}, "input": [5, 4]},
    {"params": {"heads": 2, "head_width": 3, "cross": true}, "input": [4, 4], "memory": [3, 5]},
    {"params": {"heads": 1, "causal": true, "use_bias": false}, "input": [6, 3], "batch": 3},
    {"params": {"heads": 2, "causal": true}, "input": [70, 2], "batch": 1},
    {"params": {"heads": 2}, "input": [5, 4], "lengths": [3, 5, 1, 4]},
    {"params": {"heads": 1, "causal": true}, "input": [6, 2], "lengths": [4, 2, 6, 1]},
    {"params": {"heads": 2, "cross": true}, "input": [4, 4], "memory": [3, 5]},
    {"params": {"heads": 2, "cross": true, "use_bias": false}, "input": [3, 2],
     "memory": [5, 3], "memory_lengths": [2, 5, 1, 3]},
    {"params": {"heads": 2, "kernel": "fused"}, "input": [5, 4], "lengths": [3, 5, 1, 4]},
    {"params": {"heads": 1, "causal": true, "kernel": "fused"}, "input": [6, 2],
     "lengths": [4, 2, 6, 1]},
    {"params": {"heads": 2, "cross": true, "kernel": "fused"}, "input": [3, 2],
     "memory": [5, 3], "memory_lengths": [2, 5, 1, 3]},
    {"params": {"heads": 2, "causal": true, "kernel": "fused"}, "input": [600, 2], "batch": 1},
    {"params": {"heads": 1, "kernel": "fused"}, "input": [600, 1], "batch": 1,
     "lengths": [590, 530, 600]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "multi_head_attention",
                   .description =
                       "multi-head scaled dot-product attention: self (causal optional) or cross "
                       "(a decoder's memory); padding masked",
                   .parameters = dtnn::layer_parameters::kMultiHeadAttentionParameters,
                   .traits = kTraits, .factory = create)
