// The direct algorithm of one vector width (width.hpp): its engines chosen per layer, and
// backward-data of stride-1 NHWC layers as a forward convolution of dy (direct.cpp's notes).
#pragma once
#include <algorithm>
#include <memory>

#include "channel_blocked.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "planar.hpp"
#include "width.hpp"

namespace dtnn::direct {

// The 64-byte build's algorithm (direct_wide.cpp; AVX-512 builds only).
Plugin* create_wide(const Params& p);

inline namespace DTNN_DIRECT_WIDTH {

class Direct final : public ConvAlgorithm {
 public:
  explicit Direct(const Params& p) : engine_(p.get_string("engine")) {
    if (engine_ != "auto" && engine_ != "blocked" && engine_ != "planar")
      p.fail("engine", "\"auto\", \"blocked\" (NHWC only) or \"planar\"");
  }

  std::string name() const override { return "direct"; }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.groups != 1) {
      why_not = "no grouped convolutions";
      return false;
    }
    if (engine_ == "blocked" && g.layout != Layout::nhwc) {
      why_not = "engine \"blocked\" is for NHWC only";
      return false;
    }
    if (g.layout == Layout::nhwc && engine_ != "planar") return true;
    return Planar::supports(g, why_not);
  }

  void prepare(const ConvGeometry& g) override {
    std::string why;
    blocked_engine_ =
        g.layout == Layout::nhwc &&
        (engine_ == "blocked" || (engine_ == "auto" && (g.c > kPlanarMaxIn || g.k > kPlanarMaxOut ||
                                                        !Planar::supports(g, why))));
    if (blocked_engine_) {
      blocked_.prepare(g);
      turned_ = g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 && g.dilation_w == 1 &&
                g.pad_h < g.kh && g.pad_w < g.kw && g.c >= kTurnedMinChannels;
      std::size_t engine_bytes = blocked_.workspace_bytes();
      if (turned_) {
        ConvGeometry t = g;
        t.h = g.ho();
        t.w = g.wo();
        std::swap(t.c, t.k);
        t.pad_h = g.kh - 1 - g.pad_h;
        t.pad_w = g.kw - 1 - g.pad_w;
        transposed_.prepare(t);
        engine_bytes = std::max(engine_bytes, transposed_.workspace_bytes());
      }
      // The engines' scratch, then the turned filter.
      WorkspaceSlices slices;
      slices.add<std::byte>(engine_bytes);
      turned_at_ =
          slices.add<std::byte>(turned_ ? g.kh * g.kw * g.c * g.k * dtype_size(g.dtype) : 0);
      workspace_bytes_ = slices.bytes();
    } else {
      planar_ = std::make_unique<Planar>();
      planar_->prepare(g);
    }
    workspace().reserve(workspace_bytes());
  }

  std::size_t workspace_bytes() const override {
    return blocked_engine_ ? workspace_bytes_ : planar_->workspace_bytes();
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    if (!blocked_engine_) return planar_->forward(x, w, y, claim_workspace());
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      blocked_.use<T>(claim_workspace());
      blocked_.forward(x.data<T>(), w.data<T>(), y.data<T>(), x.dim(0));
    });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    if (!blocked_engine_) return planar_->backward_data(dy, w, dx, claim_workspace());
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      std::byte* memory = claim_workspace();
      if (!turned_) {
        blocked_.use<T>(memory);
        return blocked_.backward_data(dy.data<T>(), w.data<T>(), dx.data<T>(), dy.dim(0));
      }
      T* turned = slice<T>(memory, turned_at_);
      turn_filter(w.data<T>(), turned);
      transposed_.use<T>(memory);
      transposed_.forward(dy.data<T>(), turned, dx.data<T>(), dy.dim(0));
    });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (!blocked_engine_) return planar_->backward_filter(x, dy, dw, claim_workspace());
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      blocked_.use<T>(claim_workspace());
      blocked_.backward_filter(x.data<T>(), dy.data<T>(), dw.data<T>(), x.dim(0));
    });
  }

 private:
  // turned[ky][kx][k][c] = w[KH-1-ky][KW-1-kx][c][k] (NHWC filters are [KH, KW, C, K]).
  template <class T>
  void turn_filter(const T* w, T* turned) const {
    const ConvGeometry& g = blocked_.geometry();
    const std::int64_t taps = g.kh * g.kw, C = g.c, K = g.k;
    parallel_for(taps * K, 64, [&](std::int64_t row) {  // row = (tap, k) of turned
      const std::int64_t t = row / K, k = row % K;
      const T* src = w + (taps - 1 - t) * C * K + k;
      T* dst = turned + row * C;
      for (std::int64_t c = 0; c < C; ++c) dst[c] = src[c * K];
    });
  }

  // The turned forward vectorises along C: below this many (a network's first layer, whose dx
  // training never asks for) the gathering kernel wins (3->64: 3.2 against 16.7 ms).
  static constexpr std::int64_t kTurnedMinChannels = 16;

  // NHWC layers with at most this many input and output channels go to the planar engine, whose
  // vectors run along image rows (conv_bench --param direct.engine=planar|blocked, f+b ms:
  // simplecnn's 1->4 0.23 against 2.3, 4->8 1.2 against 3.5, ResNet-20's 3->16 1.7 against 2.1;
  // VGG's 3->64 11 against 7.3).
  static constexpr std::int64_t kPlanarMaxIn = 8, kPlanarMaxOut = 16;

  std::string engine_;          // the engine parameter
  bool blocked_engine_ = true;  // this layer's engine: channel_blocked, else planar
  ChannelBlocked blocked_;
  bool turned_ = false;        // backward-data as a forward convolution (see the top)
  ChannelBlocked transposed_;  // that forward's engine
  std::size_t turned_at_ = 0, workspace_bytes_ = 0;
  std::unique_ptr<Planar> planar_;
};

}  // namespace DTNN_DIRECT_WIDTH
}  // namespace dtnn::direct
