// fc: fully connected layer. x: [N, in] (any per-sample shape, taken flat), w: [in, units],
// b: [units], y: [N, units] = x w + b.
#include <string>

#include "dtnn/gemm.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class FullyConnected final : public Layer {
 public:
  explicit FullyConnected(const Params& p)
      : units_(p.get_int("units")),
        use_bias_(p.get_bool("use_bias")),
        weights_init_(p.get_string("weights_initializer")),
        biases_init_(p.get_string("biases_initializer")) {
    if (units_ <= 0) p.fail("units", "a positive number of output units");
    check_initializer(weights_init_, p.key_path("weights_initializer"));
    check_initializer(biases_init_, p.key_path("biases_initializer"));
  }

  std::string type() const override { return "fc"; }
  Shape output_shape() const override { return Shape{units_}; }
  std::string weights_shape() const override { return w_.shape().str(); }

  void build(const LayerBuildContext& ctx) override {
    in_ = ctx.input_shape.numel();
    w_ = Tensor::empty(Shape{in_, units_}, ctx.dtype);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype);
    initialize(w_, weights_init_, in_, units_, ctx.seed);
    if (use_bias_) {
      b_ = Tensor::empty(Shape{units_}, ctx.dtype);
      db_ = Tensor::zeros(b_.shape(), ctx.dtype);
      initialize(b_, biases_init_, in_, units_, ctx.seed + 1);
    }
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (use_bias_) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }

 private:
  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    const std::int64_t n = x.dim(0);
    T* yp = y.data<T>();
    if (use_bias_) {  // y = broadcast(b), then y += x w
      const T* b = b_.data<T>();
      parallel_for(n, 64, [&](std::int64_t r) {
        for (std::int64_t j = 0; j < units_; ++j) yp[r * units_ + j] = b[j];
      });
    }
    gemm(false, false, n, units_, in_, T(1), x.data<T>(), in_, w_.data<T>(), units_,
         use_bias_ ? T(1) : T(0), yp, units_);
  }

  // From y = x w + b:  dw += x^T dy,  db += sum_rows(dy),  dx = dy w^T.
  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    const std::int64_t n = x.dim(0);
    const T* dyp = dy.data<T>();
    gemm(true, false, in_, units_, n, T(1), x.data<T>(), in_, dyp, units_, T(1), dw_.data<T>(),
         units_);
    if (use_bias_) {
      T* db = db_.data<T>();
      for (std::int64_t r = 0; r < n; ++r)
        for (std::int64_t j = 0; j < units_; ++j) db[j] += dyp[r * units_ + j];
    }
    if (dx)
      gemm(false, true, n, in_, units_, T(1), dyp, units_, w_.data<T>(), units_, T(0),
           dx->data<T>(), in_);
  }

  std::int64_t units_, in_ = 0;
  bool use_bias_;
  std::string weights_init_, biases_init_;
  Tensor w_, dw_, b_, db_;
};

Plugin* create(const Params& p, const PluginContext&) { return new FullyConnected(p); }

}  // namespace

DTNN_PLUGIN("layer", "fc", "fully connected: y = x w + b, x flattened per sample",
            R"({"units": 0, "use_bias": true, "weights_initializer": "glorot_uniform",
                "biases_initializer": "zeros"})",
            create)
