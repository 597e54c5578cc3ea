#include "dtnn/initializer.hpp"

#include <cmath>
#include <vector>

#include "dtnn/rng.hpp"

namespace dtnn {

namespace {
const std::vector<std::string> kNames = {
    "glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform",
    "lecun_normal",   "zeros",         "ones",       "normal",    "small_normal"};
}

void check_initializer(const std::string& name, const std::string& where) {
  for (const auto& n : kNames)
    if (n == name) return;
  std::string valid;
  for (const auto& n : kNames) valid += (valid.empty() ? "" : ", ") + n;
  throw Error(where + ": unknown initializer '" + name + "' (valid: " + valid + ")");
}

void initialize(Tensor& t, const std::string& name, std::int64_t fan_in, std::int64_t fan_out,
                std::uint64_t seed) {
  check_initializer(name, "initializer");
  Rng rng(seed);
  const double fi = static_cast<double>(fan_in), fo = static_cast<double>(fan_out);
  bool normal = name.find("normal") != std::string::npos;
  double scale = name == "normal" ? 1.0 : name == "small_normal" ? 0.02 : 0.0;  // limit or stddev
  if (name.rfind("glorot", 0) == 0)
    scale = normal ? std::sqrt(2.0 / (fi + fo)) : std::sqrt(6.0 / (fi + fo));
  if (name.rfind("he", 0) == 0) scale = normal ? std::sqrt(2.0 / fi) : std::sqrt(6.0 / fi);
  if (name.rfind("lecun", 0) == 0) scale = normal ? std::sqrt(1.0 / fi) : std::sqrt(3.0 / fi);
  dispatch_dtype(t.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = t.data<T>();
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      double v = name == "zeros"  ? 0.0
                 : name == "ones" ? 1.0
                 : normal         ? scale * rng.normal()
                                  : rng.uniform(-scale, scale);
      p[i] = static_cast<T>(v);
    }
  });
}

}  // namespace dtnn
