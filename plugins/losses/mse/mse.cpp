// mse: the mean squared error over all N outputs of the batch (PyTorch's MSELoss, Keras's
// mean_squared_error), for regression:
//   L = (1/N) sum_i (y_i - t_i)^2        dL/dy_i = 2 (y_i - t_i) / N
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class MeanSquaredError final : public Loss {
 public:
  std::string name() const override { return "mse"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *yp = y.data<T>(), *tp = t.data<T>();
      double sum = 0;
      for (std::int64_t i = 0; i < y.numel(); ++i) {
        const double e = double(yp[i]) - double(tp[i]);
        sum += e * e;
      }
      return sum / static_cast<double>(y.numel());
    });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *yp = y.data<T>(), *tp = t.data<T>();
      const T scale = T(2) / T(y.numel());
      T* d = dy.data<T>();
      for (std::int64_t i = 0; i < y.numel(); ++i) d[i] = (yp[i] - tp[i]) * scale;
    });
  }
};

Plugin* create(const Params&, const PluginContext&) { return new MeanSquaredError(); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "mse",
                   .description = "mean squared error over all outputs (regression)",
                   .parameters = "{}", .traits = R"({"aliases": ["mean_squared_error"]})",
                   .factory = create)
