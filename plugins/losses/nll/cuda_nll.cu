// cuda_nll: the CPU loss's weighted negative log-likelihood of log-probabilities on an NVIDIA GPU
// (cuda_log_likelihood.cuh), for one-hot and class-id targets (ids at ignore_index ignored).
#include "cuda_log_likelihood.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaNegativeLogLikelihood final : public Loss {
 public:
  explicit CudaNegativeLogLikelihood(const Params& p) : likelihood_(p, "nll") {}
  std::string name() const override { return "nll"; }
  double forward(const Tensor& y, const Tensor& t) override {
    return likelihood_.loss(y.raw(), y, t);
  }
  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    likelihood_.gradient(y.raw(), y, t, dy.raw());
  }

 private:
  LogLikelihood likelihood_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaNegativeLogLikelihood(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "nll",
                 "negative log-likelihood of log-probabilities on an NVIDIA GPU; class-id targets "
                 "may be ignored (padding), classes weighted",
                 dtnn::loss_parameters::kLogLikelihoodParameters, create)
