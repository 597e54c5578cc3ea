// ElementwiseLayer<Op>: the whole of an activation layer but its arithmetic.
// Op provides:  static constexpr const char* kType;
//               template <class T> T forward(T x) const;
//               template <class T> T gradient(T x, T y) const;   // dy/dx at x, y = forward(x)
// (static members do as well); an Op with parameters (leaky_relu's slope) is passed in built.
#pragma once
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn {

template <class Op>
class ElementwiseLayer final : public Layer {
 public:
  explicit ElementwiseLayer(Op op = Op()) : op_(op) {}
  std::string type() const override { return Op::kType; }
  void build(const LayerBuildContext& ctx) override { shape_ = ctx.input_shape; }
  Shape output_shape() const override { return shape_; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.numel(), kParallelGrain, [&](std::int64_t i) { yp[i] = op_.forward(xp[i]); });
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
                   [&](std::int64_t i) { dxp[i] = dyp[i] * op_.gradient(xp[i], yp[i]); });
    });
  }

 private:
  Op op_;
  Shape shape_;
};

}  // namespace dtnn
