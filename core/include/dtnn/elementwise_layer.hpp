// ElementwiseLayer<Op>: the whole of an activation layer but its arithmetic.
// Op provides:  static constexpr const char* kType;
//               template <class T> static T forward(T x);
//               template <class T> static T gradient(T x, T y);   // dy/dx at x, with y =
//               forward(x)
#pragma once
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn {

template <class Op>
class ElementwiseLayer final : public Layer {
 public:
  std::string type() const override { return Op::kType; }
  void build(const LayerBuildContext& ctx) override { shape_ = ctx.input_shape; }
  Shape output_shape() const override { return shape_; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.numel(), kParallelGrain, [&](std::int64_t i) { yp[i] = Op::forward(xp[i]); });
    });
  }

  // dx = dy * f'(x)
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *xp = x.data<T>(), *yp = y.data<T>(), *dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(x.numel(), kParallelGrain,
                   [&](std::int64_t i) { dxp[i] = dyp[i] * Op::gradient(xp[i], yp[i]); });
    });
  }

 private:
  Shape shape_;
};

}  // namespace dtnn
