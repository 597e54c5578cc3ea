#include "dtnn/nonfinite.hpp"

#include <cmath>

#include "dtnn/error.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"
#include "finite_kernels.hpp"

namespace dtnn {

NonFinitePolicy parse_nonfinite_policy(std::string_view s) {
  if (s == "stop") return NonFinitePolicy::stop;
  if (s == "skip_batch") return NonFinitePolicy::skip_batch;
  if (s == "ignore") return NonFinitePolicy::ignore;
  throw Error("training.on_nonfinite: expected \"stop\", \"skip_batch\" or \"ignore\", got '" +
              std::string(s) + "'");
}

namespace {
const isa::Family<FiniteKernels> kFinite("core/finite",
                                         {
                                             {isa::Level::portable,
                                              &detail::portable::finite_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                                             {isa::Level::avx2, &detail::avx2::finite_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                                             {isa::Level::avx512, &detail::avx512::finite_kernels},
#endif
                                         });
}  // namespace

const isa::Family<FiniteKernels>& finite_kernels() { return kFinite; }

bool all_finite(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return true;
  const Tensor host = t.to(Device::cpu);
  const FiniteKernels& k = kFinite.best();
  if (host.dtype() == DType::float32) return k.f32(host.data<float>(), host.numel());
  return k.f64(host.data<double>(), host.numel());
}

std::string locate_nonfinite(Model& model, Loss& loss, const Tensor& x, const Tensor& y) {
  if (!all_finite(x)) return "the input batch";
  model.zero_grad();
  // Each output as soon as its layer wrote it: a layer that runs in place writes over it.
  std::size_t first_bad = model.num_layers();
  const Tensor& prediction = model.forward(x, Mode::train, [&](std::size_t i) {
    if (first_bad == model.num_layers() && !all_finite(model.layer_output(i))) first_bad = i;
  });
  if (first_bad < model.num_layers())
    return "layer " + std::to_string(first_bad + 1) + " (" + model.layer(first_bad).type() +
           ") output";
  std::string found;
  if (!std::isfinite(loss.forward(prediction, y))) found = "the loss";
  if (found.empty()) {
    model.backward(loss, y);
    // Backward runs from the last layer to the first: the first gradient to go bad is the last.
    const auto params = model.parameters();
    for (std::size_t k = params.size(); k-- > 0;)
      if (!all_finite(params[k].grad)) {
        found = "gradient of " + params[k].name;
        break;
      }
  }
  model.zero_grad();
  return found;
}

}  // namespace dtnn
