// multi_head_attention (Vaswani et al. 2017), self-attention over a sequence x: [N, T, D] with H
// heads of width d = D / H:
//   [Q K V] = x Wqkv + bqkv                        Wqkv: [D, 3D], one GEMM over all N*T rows
//   per sample and head:  S = Q_h K_h^T / sqrt(d),  P = softmax over each row of S (causal: row i
//                         sees columns 0..i),  C_h = P V_h
//   y = C Wo + bo                                  Wo: [D, D]
// Backward, per sample and head, with G = dC_h:
//   dV_h = P^T G,  dP = G V_h^T,  dS = P * (dP - rowsum(dP * P)) / sqrt(d),
//   dQ_h = dS K_h,  dK_h = dS^T Q_h;  then dWqkv += x^T d[QKV],  dx = d[QKV] Wqkv^T.
//
// Memory: P is kept from forward for backward, [N, H, T, T]: the one O(T^2) buffer, which the
// backward pass needs (a recomputing, online-softmax forward would trade it for a second pass).
// The (sample, head) pairs run in parallel, each on one thread, through the GEMM (BLIS, or the
// small kernels), the softmax fused with the scaling and the mask. Causal attention works in
// blocks of query rows: block b multiplies only the keys up to its last row, so about half the
// products of the full matrix are skipped.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dtnn/dense.hpp"
#include "dtnn/fast_math.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/reductions.hpp"

namespace {

using namespace dtnn;

constexpr const char* kParameters = R"({"heads": 1, "causal": false, "use_bias": true,
    "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";

constexpr std::int64_t kQueryBlock = 64;  // query rows per block of causal attention

class MultiHeadAttention final : public Layer {
 public:
  explicit MultiHeadAttention(const Params& p)
      : heads_(p.get_int("heads")),
        causal_(p.get_bool("causal")),
        use_bias_(p.get_bool("use_bias")),
        weights_init_(p.get_string("weights_initializer")),
        biases_init_(p.get_string("biases_initializer")) {
    if (heads_ <= 0) p.fail("heads", "a positive number of heads");
    check_initializer(weights_init_, p.key_path("weights_initializer"));
    check_initializer(biases_init_, p.key_path("biases_initializer"));
  }

  std::string type() const override { return "multi_head_attention"; }
  Shape output_shape() const override { return Shape{t_, d_model_}; }
  std::string weights_shape() const override {
    return wqkv_.shape().str() + " + " + wo_.shape().str();
  }
  std::string attributes() const override {
    return "heads=" + std::to_string(heads_) + (causal_ ? " causal" : "");
  }
  double forward_flops(std::int64_t batch) const override {
    const double rows = double(batch * t_), d = double(d_model_);
    const double projections = 2 * rows * d * 4 * d;
    const double attention = 4 * double(batch) * double(t_) * double(t_) * d;
    return projections + (causal_ ? attention * causal_fraction() : attention);
  }

  void build(const LayerBuildContext& ctx) override {
    if (ctx.input_shape.rank() != 2)
      throw Error("multi_head_attention: expected a sequence (positions, features), got " +
                  ctx.input_shape.str());
    t_ = ctx.input_shape[0];
    d_model_ = ctx.input_shape[1];
    if (d_model_ % heads_ != 0)
      throw Error("multi_head_attention: " + std::to_string(d_model_) +
                  " features do not split into " + std::to_string(heads_) + " heads");
    head_ = d_model_ / heads_;
    const DType dt = ctx.dtype;
    wqkv_ = Tensor::empty(Shape{d_model_, 3 * d_model_}, dt);
    initialize(wqkv_, weights_init_, d_model_, d_model_, ctx.seed);
    wo_ = Tensor::empty(Shape{d_model_, d_model_}, dt);
    initialize(wo_, weights_init_, d_model_, d_model_, ctx.seed + 1);
    dwqkv_ = Tensor::zeros(wqkv_.shape(), dt);
    dwo_ = Tensor::zeros(wo_.shape(), dt);
    if (use_bias_) {
      bqkv_ = Tensor::empty(Shape{3 * d_model_}, dt);
      initialize(bqkv_, biases_init_, d_model_, d_model_, ctx.seed + 2);
      bo_ = Tensor::empty(Shape{d_model_}, dt);
      initialize(bo_, biases_init_, d_model_, d_model_, ctx.seed + 3);
      dbqkv_ = Tensor::zeros(bqkv_.shape(), dt);
      dbo_ = Tensor::zeros(bo_.shape(), dt);
    }
    const std::int64_t n = ctx.max_batch;
    qkv_ = Tensor::empty(Shape{n, t_, 3 * d_model_}, dt);
    dqkv_ = Tensor::empty(qkv_.shape(), dt);
    context_ = Tensor::empty(Shape{n, t_, d_model_}, dt);
    dcontext_ = Tensor::empty(context_.shape(), dt);
    probs_ = Tensor::empty(Shape{n, heads_, t_, t_}, dt);
    scratch_ = Tensor::empty(Shape{std::max(1, omp_get_max_threads()), t_, t_}, dt);
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights_qkv", wqkv_, dwqkv_}};
    if (use_bias_) p.push_back({"biases_qkv", bqkv_, dbqkv_});
    p.push_back({"weights_out", wo_, dwo_});
    if (use_bias_) p.push_back({"biases_out", bo_, dbo_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }

 private:
  // The share of the T x T products causal attention computes with query blocks.
  double causal_fraction() const {
    const std::int64_t blocks = (t_ + kQueryBlock - 1) / kQueryBlock;
    double done = 0;
    for (std::int64_t b = 0; b < blocks; ++b) done += double(std::min(t_, (b + 1) * kQueryBlock));
    return done * double(kQueryBlock) / double(t_ * t_);
  }
  // Keys a block of query rows [row, row + rows) attends to.
  std::int64_t keys_for(std::int64_t row, std::int64_t rows) const {
    return causal_ ? row + rows : t_;
  }
  std::int64_t block_rows() const { return causal_ ? kQueryBlock : t_; }
  // Where pair nh (sample nh / heads, head nh % heads) starts in a [N, T, 3D] buffer (its Q; K and
  // V follow at +D and +2D) and in a [N, T, D] one.
  std::int64_t qkv_offset(std::int64_t nh) const {
    return (nh / heads_) * t_ * 3 * d_model_ + (nh % heads_) * head_;
  }
  std::int64_t context_offset(std::int64_t nh) const {
    return (nh / heads_) * t_ * d_model_ + (nh % heads_) * head_;
  }

  // out[r, :] = in[r, :] w (+ b) for rows r, and its gradients (dtnn/dense.hpp).
  template <class T>
  static void project(const T* in, std::int64_t rows, std::int64_t width_in, const Tensor& w,
                      const Tensor* b, T* out) {
    dense::forward(in, rows, width_in, w.data<T>(), w.dim(1), b ? b->data<T>() : nullptr, out);
  }
  template <class T>
  static void project_backward(const T* in, const T* g, std::int64_t rows, std::int64_t width_in,
                               const Tensor& w, Tensor& dw, Tensor* db, T* din) {
    dense::backward(in, g, rows, width_in, w.data<T>(), w.dim(1), dw.data<T>(),
                    db ? db->data<T>() : nullptr, din);
  }

  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    const std::int64_t n = x.dim(0), d = d_model_, ld = 3 * d;
    T* qkv = qkv_.data<T>();
    T* context = context_.data<T>();
    T* probs = probs_.data<T>();
    project(x.data<T>(), n * t_, d, wqkv_, use_bias_ ? &bqkv_ : nullptr, qkv);
    const T scale = T(1) / std::sqrt(T(head_));
#pragma omp parallel for schedule(dynamic) if (n * heads_ > 1)
    for (std::int64_t nh = 0; nh < n * heads_; ++nh) {
      const T* q = qkv + qkv_offset(nh);
      const T* k = q + d;
      const T* v = q + 2 * d;
      T* p = probs + nh * t_ * t_;
      T* c = context + context_offset(nh);
      for (std::int64_t row = 0; row < t_; row += block_rows()) {
        const std::int64_t rows = std::min(block_rows(), t_ - row), keys = keys_for(row, rows);
        T* pb = p + row * t_;
        gemm(false, true, rows, keys, head_, scale, q + row * ld, ld, k, ld, T(0), pb, t_);
        for (std::int64_t i = 0; i < rows; ++i)
          softmax_row(pb + i * t_, causal_ ? row + i + 1 : t_);
        gemm(false, false, rows, head_, keys, T(1), pb, t_, v, ld, T(0), c + row * d, d);
      }
    }
    project(context, n * t_, d, wo_, use_bias_ ? &bo_ : nullptr, y.data<T>());
  }

  // Softmax of the first `seen` values of a row of T; the rest (masked) become 0.
  template <class T>
  void softmax_row(T* __restrict r, std::int64_t seen) const {
    const T mx = reduce::max(r, seen);
    for (std::int64_t j = 0; j < seen; ++j) r[j] = fast::exp(r[j] - mx);
    const T inv = T(1) / reduce::sum(r, seen);
    for (std::int64_t j = 0; j < seen; ++j) r[j] *= inv;
    for (std::int64_t j = seen; j < t_; ++j) r[j] = T(0);
  }

  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    const std::int64_t n = x.dim(0), d = d_model_, ld = 3 * d;
    const T* qkv = qkv_.data<T>();
    const T* probs = probs_.data<T>();
    T* dqkv = dqkv_.data<T>();
    T* dcontext = dcontext_.data<T>();
    project_backward(context_.data<T>(), dy.data<T>(), n * t_, d, wo_, dwo_,
                     use_bias_ ? &dbo_ : nullptr, dcontext);
    const T scale = T(1) / std::sqrt(T(head_));
#pragma omp parallel for schedule(dynamic) if (n * heads_ > 1)
    for (std::int64_t nh = 0; nh < n * heads_; ++nh) {
      const T* q = qkv + qkv_offset(nh);
      const T* k = q + d;
      const T* v = q + 2 * d;
      T* dq = dqkv + qkv_offset(nh);
      T* dk = dq + d;
      T* dv = dq + 2 * d;
      const T* p = probs + nh * t_ * t_;
      const T* g = dcontext + context_offset(nh);
      T* ds = scratch_.data<T>() + omp_get_thread_num() * t_ * t_;
      for (std::int64_t row = 0; row < t_; row += block_rows()) {
        const std::int64_t rows = std::min(block_rows(), t_ - row), keys = keys_for(row, rows);
        const T* pb = p + row * t_;
        // The first block writes dK and dV over their rows [0, keys); later ones add to them,
        // and a causal block's new rows [keys of the previous block, keys) start from zero.
        const std::int64_t fresh_from = row == 0 ? 0 : keys_for(row - block_rows(), block_rows());
        for (std::int64_t j = fresh_from; j < keys; ++j) {
          std::fill_n(dk + j * ld, head_, T(0));
          std::fill_n(dv + j * ld, head_, T(0));
        }
        gemm(true, false, keys, head_, rows, T(1), pb, t_, g + row * d, d, T(1), dv, ld);
        gemm(false, true, rows, keys, head_, T(1), g + row * d, d, v, ld, T(0), ds, t_);
        for (std::int64_t i = 0; i < rows; ++i) {
          const T* __restrict pr = pb + i * t_;
          T* __restrict dr = ds + i * t_;
          const T dot = reduce::dot(dr, pr, keys);
          for (std::int64_t j = 0; j < keys; ++j) dr[j] = pr[j] * (dr[j] - dot) * scale;
        }
        gemm(false, false, rows, head_, keys, T(1), ds, t_, k, ld, T(0), dq + row * ld, ld);
        gemm(true, false, keys, head_, rows, T(1), ds, t_, q + row * ld, ld, T(1), dk, ld);
      }
    }
    project_backward(x.data<T>(), dqkv, n * t_, d, wqkv_, dwqkv_, use_bias_ ? &dbqkv_ : nullptr,
                     dx ? dx->data<T>() : static_cast<T*>(nullptr));
  }

  std::int64_t heads_;
  bool causal_, use_bias_;
  std::string weights_init_, biases_init_;
  std::int64_t t_ = 0, d_model_ = 0, head_ = 0;
  Tensor wqkv_, bqkv_, wo_, bo_, dwqkv_, dbqkv_, dwo_, dbo_;
  Tensor qkv_, dqkv_, context_, dcontext_, probs_, scratch_;
};

Plugin* create(const Params& p, const PluginContext&) { return new MultiHeadAttention(p); }

}  // namespace

// Conformance: non-causal and causal, one and several heads; the causal case at 70 positions
// spans two query blocks.
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"heads": 2}, "input": [5, 4]},
    {"params": {"heads": 1, "causal": true, "use_bias": false}, "input": [6, 3], "batch": 3},
    {"params": {"heads": 2, "causal": true}, "input": [70, 2], "batch": 1}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "multi_head_attention",
                   .description = "multi-head scaled dot-product self-attention (causal optional)",
                   .parameters = kParameters, .traits = kTraits, .factory = create)
