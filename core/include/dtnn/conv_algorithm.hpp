// ConvAlgorithm: one way to compute a 2-D convolution. The conv2d layer owns weights and
// geometry; the algorithm does the arithmetic (it never knows which layer it serves).
//
// Tensors, by layout:
//   NHWC: x [N, H, W, C], w [KH, KW, C, K], y [N, Ho, Wo, K]
//   NCHW: x [N, C, H, W], w [K, C, KH, KW], y [N, K, Ho, Wo]
//   Ho = (H + 2*pad_h - dil_h*(KH-1) - 1) / stride_h + 1   (likewise Wo)
// Grouped (groups G > 1, ResNeXt's): C and K divide by G; output channels [g K/G, (g+1) K/G) read
// input channels [g C/G, (g+1) C/G) only, and w's C axis holds C/G channels (the filter of
// output k reads group k / (K/G)'s channels: NHWC [KH, KW, C/G, K], NCHW [K, C/G, KH, KW]). An
// algorithm declares that it knows of groups by its descriptor's traits, {"groups": true}; only
// then does it see a grouped geometry (from conv2d, best_of or the conformance harness), and its
// supports() may still refuse one. An algorithm written before groups existed never sees one.
// Contract: forward overwrites y; backward_data overwrites dx; backward_filter ACCUMULATES into dw.
// backward_filter may reuse what the most recent forward computed for the same, unchanged x.
// Scratch memory comes from workspace() (see workspace.hpp): reserved in prepare, claimed in
// passes.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "dtnn/communicator.hpp"
#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/precision.hpp"
#include "dtnn/tensor.hpp"
#include "dtnn/workspace.hpp"

namespace dtnn {

class Params;

struct DTNN_CORE_EXPORT ConvGeometry {
  std::int64_t n = 1;  // the largest batch the algorithm will see (actual batch comes from x)
  std::int64_t h = 1, w = 1, c = 1;
  std::int64_t k = 1, kh = 1, kw = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  DType dtype = DType::float32;
  Layout layout = Layout::nhwc;
  // The precision of the products (precision.hpp): an algorithm sees one other than fp32 only when
  // its traits list it, {"precisions": ["bf16", "fp16"]}; it then rounds what it multiplies.
  Precision precision = Precision::fp32;

  std::int64_t ho() const { return (h + 2 * pad_h - dilation_h * (kh - 1) - 1) / stride_h + 1; }
  std::int64_t wo() const { return (w + 2 * pad_w - dilation_w * (kw - 1) - 1) / stride_w + 1; }
  // The output pixel (oy, ox) whose tap (ky, kx) reads input pixel (iy, ix); false when no
  // output pixel does (backward-data gathers dx from these). out_h, out_w: ho() and wo(), which
  // callers in packing loops keep rather than recompute.
  bool output_reading(std::int64_t iy, std::int64_t ix, std::int64_t ky, std::int64_t kx,
                      std::int64_t out_h, std::int64_t out_w, std::int64_t& oy,
                      std::int64_t& ox) const {
    oy = iy + pad_h - ky * dilation_h;
    ox = ix + pad_w - kx * dilation_w;
    if (oy < 0 || ox < 0) return false;
    if (stride_h > 1) {  // (no division for the common stride 1)
      if (oy % stride_h != 0) return false;
      oy /= stride_h;
    }
    if (stride_w > 1) {
      if (ox % stride_w != 0) return false;
      ox /= stride_w;
    }
    return oy < out_h && ox < out_w;
  }
  // The window of a layer's parameters: "kernel", "stride", "padding", "dilation" (each one
  // integer or a [height, width] pair), as conv2d and depthwise_conv2d, CPU or GPU, take them.
  void read_window(const Params& p);
  std::string window_str() const;  // "kernel=(3,3) padding=(1,1) stride=(2,2) dilation=(1,1)"
  Shape x_shape(std::int64_t batch) const;
  Shape w_shape() const;
  Shape y_shape(std::int64_t batch) const;
  std::string str() const;  // for messages and tables
};

// Element strides of an activation as (sample, row, column, channel), whatever the layout.
struct ActivationStrides {
  std::int64_t n, y, x, c;
};
inline ActivationStrides activation_strides(Layout layout, std::int64_t h, std::int64_t w,
                                            std::int64_t c) {
  if (layout == Layout::nhwc) return {h * w * c, w * c, c, 1};
  return {c * h * w, w, 1, h * w};
}

// A pixel of an activation (sample, row, column), stepped through in storage order without
// dividing: packing and blocked loops walk consecutive pixels.
struct Pixel {
  std::int64_t n, y, x;
  static Pixel at(std::int64_t p, std::int64_t h, std::int64_t w) {
    return {p / (h * w), p / w % h, p % w};
  }
  void next(std::int64_t h, std::int64_t w) {
    if (++x < w) return;
    x = 0;
    if (++y < h) return;
    y = 0;
    ++n;
  }
};

// Element strides of g's filter as (filter row, filter column, input channel, output channel).
struct FilterStrides {
  std::int64_t y, x, c, k;
};
inline FilterStrides filter_strides(const ConvGeometry& g) {
  if (g.layout == Layout::nhwc) return {g.kw * g.c * g.k, g.c * g.k, g.k, 1};  // [KH,KW,C,K]
  return {g.kw, 1, g.kh * g.kw, g.c * g.kh * g.kw};                            // [K,C,KH,KW]
}

// dst[0, count) = src[0, count) for the short runs conv algorithms copy (a pixel's channels): up to
// 63 values as fixed-size moves of 32, 16, 8, 4, 2 and 1 as the count's bits say, longer runs by
// memcpy. (A loop, even of fixed-size moves, becomes a call to memmove, which costs more than
// copying a few dozen bytes.)
template <class T>
[[gnu::always_inline]] inline void copy_short(const T* src, T* dst, std::int64_t count) {
  if (count >= 64) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * sizeof(T));
    return;
  }
  auto move = [&](auto n) {
    constexpr std::int64_t kSize = decltype(n)::value;
    std::memcpy(dst, src, kSize * sizeof(T));
    src += kSize;
    dst += kSize;
  };
  if (count & 32) move(std::integral_constant<std::int64_t, 32>{});
  if (count & 16) move(std::integral_constant<std::int64_t, 16>{});
  if (count & 8) move(std::integral_constant<std::int64_t, 8>{});
  if (count & 4) move(std::integral_constant<std::int64_t, 4>{});
  if (count & 2) move(std::integral_constant<std::int64_t, 2>{});
  if (count & 1) *dst = *src;
}

// dst[i * ds] = src[i * ss] for i < count: a channel run between layouts. (Always inlined, like
// copy_short: code built once per instruction set calls it, and one copy out of line would serve
// every variant.)
template <class T>
[[gnu::always_inline]] inline void copy_strided(const T* src, std::int64_t ss, T* dst,
                                                std::int64_t ds, std::int64_t count) {
  if (ss == 1 && ds == 1) {
    copy_short(src, dst, count);
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i * ds] = src[i * ss];
  }
}

enum class ConvPass : std::uint8_t { forward = 0, backward_data = 1, backward_filter = 2 };

class Registry;

// True when conv plugin `name` declares {"groups": true} in its traits (see above).
DTNN_CORE_EXPORT bool takes_groups(const Registry& registry, const std::string& name);
// True when conv plugin `name` computes products in precision p: fp32 always, another when its
// traits list it in "precisions".
DTNN_CORE_EXPORT bool takes_precision(const Registry& registry, const std::string& name,
                                      Precision p);

class DTNN_CORE_EXPORT ConvAlgorithm : public Plugin {
 public:
  ~ConvAlgorithm() override;
  virtual std::string name() const = 0;
  // False (with the reason in why_not) when this algorithm cannot compute g for pass.
  virtual bool supports(const ConvGeometry& g, ConvPass pass, std::string& why_not) const = 0;
  // Called before prepare with the run's communicator (null when the run has one process): an
  // algorithm whose choices come from measurements (best_of) agrees on them with the other ranks.
  virtual void set_communicator(Communicator* communicator) { (void)communicator; }
  // Called before prepare with the workspace the algorithm shares with the other layers of its
  // model; without one (benchmarks, tests) it has a workspace of its own.
  void set_workspace(Workspace* shared) { shared_workspace_ = shared; }
  // Called once per geometry before any pass; reserves in workspace() what the passes need for
  // batches <= g.n.
  virtual void prepare(const ConvGeometry& g) = 0;
  // What the passes need (the reservation, plus any memory the algorithm keeps for itself).
  virtual std::size_t workspace_bytes() const { return 0; }

  virtual void forward(const Tensor& x, const Tensor& w, Tensor& y) = 0;
  virtual void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) = 0;
  virtual void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) = 0;

  // What the algorithm has to say at the end of the run (best_of: its timings and choice); "" if
  // nothing.
  virtual std::string report() const { return ""; }

 protected:
  Workspace& workspace() {
    if (shared_workspace_) return *shared_workspace_;
    if (!own_workspace_) own_workspace_ = std::make_unique<Workspace>();
    return *own_workspace_;
  }
  // In a pass: the workspace memory, claimed for this algorithm.
  std::byte* claim_workspace() { return workspace().claim(this); }

 private:
  Workspace* shared_workspace_ = nullptr;
  std::unique_ptr<Workspace> own_workspace_;
};

}  // namespace dtnn
