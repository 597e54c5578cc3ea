#include "dtnn/nonfinite.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "dtnn/error.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/model.hpp"

namespace dtnn {

NonFinitePolicy parse_nonfinite_policy(std::string_view s) {
  if (s == "stop") return NonFinitePolicy::stop;
  if (s == "skip_batch") return NonFinitePolicy::skip_batch;
  if (s == "ignore") return NonFinitePolicy::ignore;
  throw Error("training.on_nonfinite: expected \"stop\", \"skip_batch\" or \"ignore\", got '" +
              std::string(s) + "'");
}

namespace {

// A value is NaN or infinite when its exponent bits are all ones. Tested on the bits, the loop is
// an OR of integer compares, which vectorises (a floating-point sum would not: its order is fixed).
template <class T, class Bits>
bool finite_span(const T* p, std::int64_t n) {
  static_assert(sizeof(T) == sizeof(Bits));
  constexpr Bits kExponent = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  Bits bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, p + i, sizeof b);
    bad |= static_cast<Bits>((b & kExponent) == kExponent);
  }
  return bad == 0;
}

}  // namespace

bool all_finite(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return true;
  const Tensor host = t.to(Device::cpu);
  return dispatch_dtype(host.dtype(), [&](auto z) {
    using T = decltype(z);
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    return finite_span<T, Bits>(host.data<T>(), host.numel());
  });
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
