// A set of ranks as the bits of one 64-bit word, as the codecs that flag a rank's bad values carry
// it in their payloads (secagg, ckks): rank r sets bit r, ranks from 63 up share bit 63.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

namespace dtnn_codecs {

inline std::uint64_t rank_bit(int rank) { return std::uint64_t{1} << std::min(rank, 63); }

// "0, 2, 63+": the ranks whose bits are set.
inline std::string ranks_named(std::uint64_t bits) {
  std::string ranks;
  for (int r = 0; r < 64; ++r)
    if (bits >> r & 1)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r) + (r == 63 ? "+" : "");
  return ranks;
}

}  // namespace dtnn_codecs
