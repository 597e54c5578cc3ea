// Rng: a small, portable, seedable generator (splitmix64). The same seed gives the same numbers
// on every platform and standard library, which std::shuffle and std::*_distribution do not.
#pragma once
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>

namespace dtnn {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  double normal() {  // Box-Muller; one value per call keeps the stream simple
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }  // n small: bias negligible
  template <class T>
  void shuffle(std::span<T> v) {  // Fisher-Yates
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }
  // An independent stream for a sub-component (layer i, epoch e, ...).
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t salt) {
    Rng r(seed ^ (salt * 0xd1b54a32d192ed03ULL));
    return r.next();
  }

 private:
  std::uint64_t state_;
};

}  // namespace dtnn
