// What the sparse codecs (topk, oktopk) share: a value and its index in the bucket as 8 bytes on
// the wire (uint32 index, float32 value, host order), and the magnitude thresholds they select by.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace dtnn::codecs {

struct Pair {
  std::uint32_t index;
  float value;
};
inline constexpr std::size_t kPairBytes = 8;

inline void write_pair(unsigned char* at, Pair p) {
  std::memcpy(at, &p.index, 4);
  std::memcpy(at + 4, &p.value, 4);
}
inline Pair read_pair(const unsigned char* at) {
  Pair p;
  std::memcpy(&p.index, at, 4);
  std::memcpy(&p.value, at + 4, 4);
  return p;
}

// The k-th largest magnitude among the nonzero values (the smallest when there are fewer than k;
// 0 when none is nonzero).
inline float kth_magnitude(std::span<const float> x, std::size_t k) {
  std::vector<float> m;
  m.reserve(x.size());
  for (float v : x)
    if (v != 0.0f) m.push_back(std::abs(v));
  if (m.empty() || k == 0) return 0.0f;
  if (k >= m.size()) return *std::min_element(m.begin(), m.end());
  std::nth_element(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(k - 1), m.end(),
                   std::greater<float>());
  return m[k - 1];
}

// The nonzero values of x whose magnitude reaches `threshold`, as pairs in index order; `first`
// is x's index in the bucket.
inline std::vector<Pair> pairs_above(std::span<const float> x, float threshold,
                                     std::size_t first = 0) {
  std::vector<Pair> out;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0.0f && std::abs(x[i]) >= threshold)
      out.push_back({static_cast<std::uint32_t>(first + i), x[i]});
  return out;
}

}  // namespace dtnn::codecs
